/**
 * The wire shapes of a message: ToolStore's generic JSON (signed when the channel has a secret),
 * Slack's incoming-webhook message (text plus Block Kit blocks with a link button), ntfy's JSON
 * publish (topic, title, message, click, a view action), a Web Push payload for the service
 * worker, and an email (plain text and HTML). Pure functions; sending is in ./transport.ts.
 */
import { createHmac } from "node:crypto";
import type { NotificationMessage } from "./message";

export const WEBHOOK_FORMATS = ["json", "slack", "ntfy"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export const SIGNATURE_HEADER = "x-toolstore-signature";
export const TIMESTAMP_HEADER = "x-toolstore-timestamp";

export interface HttpRequestShape {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`: binding the timestamp lets a receiver refuse
 * replays older than a few minutes (see README "Notifications").
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

export function genericPayload(message: NotificationMessage, sentAt: Date) {
  return {
    type: `approval.${message.kind}`,
    title: message.title,
    text: message.body,
    url: message.url,
    sentAt: sentAt.toISOString(),
    approvals: message.approvals.map((a) => ({
      id: a.id,
      kind: a.kind,
      capability: a.capability,
      category: a.category,
      requestedBy: a.requestedBy,
      key: a.key,
      client: a.client,
      owner: a.owner,
      argsSummary: a.argsSummary,
      expiresAt: a.expiresAt,
      url: a.url,
    })),
  };
}

/** Slack mrkdwn escapes exactly these three characters. */
function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function slackPayload(message: NotificationMessage) {
  const lines = message.approvals.length
    ? message.approvals.map(
        (a) =>
          `*${slackEscape(a.headline)}*\nAsked by ${slackEscape(a.requestedBy)}${a.argsSummary ? `\n\`${slackEscape(a.argsSummary)}\`` : ""}`,
      )
    : [slackEscape(message.body)];
  return {
    // The top-level text is the fallback Slack shows in notifications and where blocks cannot render.
    text: `${message.title} ${message.url}`,
    blocks: [
      { type: "header", text: { type: "plain_text", text: message.title.slice(0, 150), emoji: false } },
      ...lines
        .slice(0, 10)
        .map((text) => ({ type: "section", text: { type: "mrkdwn", text: text.slice(0, 3000) } })),
      {
        type: "actions",
        elements: [
          {
            type: "button",
            text: {
              type: "plain_text",
              text: message.approvals.length > 1 ? "Open the queue" : "Open the card",
            },
            url: message.url,
            style: "primary",
          },
        ],
      },
    ],
  };
}

/**
 * ntfy's JSON publishing posts to the server's root with the topic in the body, so a channel URL
 * `https://ntfy.sh/my-topic` is split into the server and the topic.
 */
export function ntfyTarget(url: string): { server: string; topic: string } {
  const u = new URL(url);
  const parts = u.pathname.split("/").filter(Boolean);
  const topic = parts.pop();
  if (!topic) throw new Error(`ntfy URL ${url} names no topic: use https://<server>/<topic>`);
  u.pathname = parts.length ? `/${parts.join("/")}/` : "/";
  u.search = "";
  return { server: u.toString(), topic };
}

export function ntfyPayload(message: NotificationMessage, topic: string) {
  return {
    topic,
    title: message.title,
    message: message.body,
    priority: message.kind === "reminder" ? 5 : 4,
    tags: ["raised_hand"],
    click: message.url,
    actions: [
      {
        action: "view",
        label: message.approvals.length > 1 ? "Open the queue" : "Open the card",
        url: message.url,
        clear: true,
      },
    ],
  };
}

export function webhookRequest(
  format: WebhookFormat,
  url: string,
  message: NotificationMessage,
  options: { secret: string | null; now: Date },
): HttpRequestShape {
  const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "ToolStore" };
  if (format === "slack") return { url, headers, body: JSON.stringify(slackPayload(message)) };
  if (format === "ntfy") {
    const { server, topic } = ntfyTarget(url);
    if (options.secret) headers.authorization = `Bearer ${options.secret}`;
    return { url: server, headers, body: JSON.stringify(ntfyPayload(message, topic)) };
  }
  const body = JSON.stringify(genericPayload(message, options.now));
  if (options.secret) {
    const timestamp = Math.floor(options.now.getTime() / 1000);
    headers[TIMESTAMP_HEADER] = String(timestamp);
    headers[SIGNATURE_HEADER] = signWebhook(options.secret, timestamp, body);
  }
  return { url, headers, body };
}

/** What the service worker (public/sw.js) shows; `tag` folds a reminder into its request's notification. */
export function pushPayload(message: NotificationMessage) {
  const [first] = message.approvals;
  return {
    title: message.title,
    body: message.body.split("\n").slice(0, 3).join("\n"),
    url: message.url,
    tag: message.approvals.length === 1 && first ? `approval-${first.id}` : `toolstore-${message.kind}`,
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function emailContent(message: NotificationMessage) {
  const blocks = message.body.split("\n\n").map((block) =>
    block
      .split("\n")
      .map((line) => escapeHtml(line))
      .join("<br>"),
  );
  const label = message.approvals.length > 1 ? "Open the queue" : "Open the card";
  return {
    subject: message.title,
    text: message.body,
    html: `<div style="font-family:system-ui,sans-serif;font-size:15px;line-height:1.5">${blocks.map((b) => `<p>${b}</p>`).join("")}<p><a href="${escapeHtml(message.url)}" style="display:inline-block;padding:10px 16px;background:#2f5bd3;color:#fff;border-radius:6px;text-decoration:none">${label}</a></p></div>`,
  };
}
