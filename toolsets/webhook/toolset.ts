/**
 * Posts a JSON event to a webhook configured in the console: a home-automation hook, a chat
 * incoming-webhook, a CI trigger or any local service. Delivering the event changes something
 * outside ToolStore, so the category is write.
 * @timeout 10000
 * @env WEBHOOK_URL Where events are POSTed, e.g. http://localhost:8123/api/webhook/agent
 * @secret WEBHOOK_TOKEN header Optional; sent as "Authorization: Bearer <WEBHOOK_TOKEN>". The code
 * never holds the value: env.WEBHOOK_TOKEN is a placeholder the host fills in, in a header only,
 * when the request leaves for one of the toolset's declared hosts.
 */

export interface Delivery {
  /** True when the receiver answered 2xx. */
  delivered: boolean;
  status: number;
  /** The receiver's answer: parsed JSON when it is JSON, else text (at most 2000 characters). */
  response: unknown;
}

const EVENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/;

/**
 * Send one event to the configured webhook as a JSON POST body
 * { "event": ..., "data": ..., "sent_at": ISO time }. Returns whether the receiver accepted it
 * (2xx), its status and its answer. A receiver answering 4xx/5xx is reported, not thrown.
 * @tool write
 * @param event Event name, e.g. "build.requested" (letters, digits, _ . : -)
 * @param data Any JSON payload for the receiver
 */
export async function send(event: string, data: unknown = null): Promise<Delivery> {
  const url = env.WEBHOOK_URL;
  if (!url) throw new Error("WEBHOOK_URL is not set for this toolset; an admin sets it in the console");
  if (!EVENT_NAME.test(event))
    throw new Error(
      "event must be 1..100 characters of letters, digits, _ . : - (starting with a letter or digit)",
    );
  const body = JSON.stringify({ event, data, sent_at: new Date().toISOString() });
  if (body.length > 256 * 1024) throw new Error("the event is larger than 256 KiB");
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "toolstore-webhook",
  };
  // env.WEBHOOK_TOKEN is set (to its placeholder) only when an admin stored the secret.
  if (env.WEBHOOK_TOKEN) headers.authorization = `Bearer ${env.WEBHOOK_TOKEN}`;
  const response = await fetch(url, { method: "POST", headers, body });
  const text = (await response.text()).slice(0, 2000);
  let parsed: unknown = text;
  if ((response.headers.get("content-type") ?? "").includes("json")) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { delivered: response.ok, status: response.status, response: parsed };
}
