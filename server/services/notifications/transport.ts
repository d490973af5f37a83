/**
 * Sends one message over one channel: an HTTP POST for webhooks and Web Push (the push request is
 * encrypted and VAPID-signed by `web-push`, then posted like any other request), SMTP through
 * nodemailer for email. A failure throws a SendError whose message says what the receiver
 * answered; `gone` marks a push subscription the push service no longer knows (404/410).
 */
import nodemailer from "nodemailer";
import webpush from "web-push";
import type { NotificationMessage } from "./message";
import {
  emailContent,
  type HttpRequestShape,
  pushPayload,
  type WebhookFormat,
  webhookRequest,
} from "./payloads";

const SEND_TIMEOUT_MS = 10_000;
const PUSH_TTL_S = 24 * 60 * 60;

export class SendError extends Error {
  constructor(
    message: string,
    readonly gone = false,
  ) {
    super(message);
    this.name = "SendError";
  }
}

export interface ChannelForSend {
  kind: string;
  format: string | null;
  target: string;
  /** Opened: a webhook's secret, or a push subscription's keys as JSON `{ p256dh, auth }`. */
  secret: string | null;
}

export interface TransportConfig {
  smtpUrl: string | null;
  smtpFrom: string;
  vapid: { publicKey: string; privateKey: string; subject: string } | null;
}

async function post(request: HttpRequestShape): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new SendError(`could not reach ${new URL(request.url).host}: ${why}`);
  }
  if (!response.ok) {
    const text = (await response.text().catch(() => "")).replace(/\s+/g, " ").slice(0, 200);
    throw new SendError(
      `${new URL(request.url).host} answered HTTP ${response.status}${text ? `: ${text}` : ""}`,
      response.status === 404 || response.status === 410,
    );
  }
  await response.body?.cancel().catch(() => undefined);
  return response;
}

async function sendPush(channel: ChannelForSend, message: NotificationMessage, config: TransportConfig) {
  if (!config.vapid) throw new SendError("push keys are not ready yet; try again in a moment");
  const keys = channel.secret ? (JSON.parse(channel.secret) as { p256dh: string; auth: string }) : null;
  if (!keys)
    throw new SendError("this push subscription has no keys: turn push off and on again on that device");
  const details = webpush.generateRequestDetails(
    { endpoint: channel.target, keys },
    JSON.stringify(pushPayload(message)),
    { vapidDetails: config.vapid, TTL: PUSH_TTL_S, urgency: "high", contentEncoding: "aes128gcm" },
  );
  const headers = Object.fromEntries(Object.entries(details.headers).map(([k, v]) => [k, String(v)]));
  await post({ url: details.endpoint, headers, body: details.body as unknown as string });
}

async function sendEmail(channel: ChannelForSend, message: NotificationMessage, config: TransportConfig) {
  if (!config.smtpUrl) {
    throw new SendError(
      "email is not configured: set TOOLSTORE_SMTP_URL (e.g. smtps://user:pass@smtp.example.com)",
    );
  }
  const url = new URL(config.smtpUrl);
  url.searchParams.set("connectionTimeout", String(SEND_TIMEOUT_MS));
  url.searchParams.set("socketTimeout", String(SEND_TIMEOUT_MS));
  const transport = nodemailer.createTransport(url.toString());
  try {
    await transport.sendMail({ from: config.smtpFrom, to: channel.target, ...emailContent(message) });
  } catch (error) {
    throw new SendError(`SMTP: ${(error as Error).message}`);
  } finally {
    transport.close();
  }
}

export async function sendOverChannel(
  channel: ChannelForSend,
  message: NotificationMessage,
  config: TransportConfig,
  now: Date,
): Promise<void> {
  if (channel.kind === "webhook") {
    const format = (channel.format ?? "json") as WebhookFormat;
    await post(webhookRequest(format, channel.target, message, { secret: channel.secret, now }));
  } else if (channel.kind === "push") {
    await sendPush(channel, message, config);
  } else if (channel.kind === "email") {
    await sendEmail(channel, message, config);
  } else {
    throw new SendError(`unknown channel kind ${channel.kind}`);
  }
}
