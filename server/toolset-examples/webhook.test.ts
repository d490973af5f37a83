import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeTestPool, compileExample, runBinding } from "./helpers";
import { type LocalServer, sendJson, startLocalServer } from "./local-server";

const webhook = compileExample("webhook");
const TOKEN = "s3cret-webhook-token";
let receiver: LocalServer;

beforeAll(async () => {
  receiver = await startLocalServer((req, res) => {
    if (req.url.pathname === "/refuse") return sendJson(res, 422, { error: "unknown event" });
    // Echoes the Authorization header back: a careless receiver must not leak the secret.
    sendJson(res, 200, { ok: true, seen_auth: req.headers.authorization ?? null });
  });
});

afterAll(async () => {
  await receiver.close();
  await closeTestPool();
});

describe("[TOOLSETS] webhook", () => {
  it("is one write binding whose secret is declared in the header", () => {
    expect(webhook.bindings.map((b) => [b.name, b.category])).toEqual([["send", "write"]]);
    expect(webhook.declarations.env).toEqual([
      { name: "WEBHOOK_URL", secret: false, description: expect.stringContaining("Where events are POSTed") },
      {
        name: "WEBHOOK_TOKEN",
        secret: true,
        description: expect.stringContaining("Bearer"),
        placements: ["header"],
      },
    ]);
  });

  it("POSTs the event as JSON with the bearer token, and the token never comes back", async () => {
    const result = await runBinding(
      webhook,
      "send",
      { event: "lights.off", data: { room: "kitchen" } },
      {
        env: { WEBHOOK_URL: `${receiver.baseUrl}/hook`, WEBHOOK_TOKEN: "{{secret:WEBHOOK_TOKEN}}" },
        secrets: { WEBHOOK_TOKEN: TOKEN },
        allowedHosts: ["127.0.0.1"],
      },
    );
    expect(result.ok).toBe(true);
    const request = receiver.requests.at(-1);
    expect(request?.method).toBe("POST");
    expect(request?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(JSON.parse(request?.body ?? "{}")).toMatchObject({
      event: "lights.off",
      data: { room: "kitchen" },
    });
    expect(JSON.stringify(result)).not.toContain(TOKEN);
    // The receiver echoed the header: the value is masked before the code sees the answer.
    expect(result).toMatchObject({
      value: { delivered: true, status: 200, response: { seen_auth: "Bearer ***" } },
    });
  });

  it("sends the token only to a host the toolset names, never through a bare * allow-list entry", async () => {
    const before = receiver.requests.length;
    const result = await runBinding(
      webhook,
      "send",
      { event: "lights.off" },
      {
        env: { WEBHOOK_URL: `${receiver.baseUrl}/hook`, WEBHOOK_TOKEN: "{{secret:WEBHOOK_TOKEN}}" },
        secrets: { WEBHOOK_TOKEN: TOKEN },
        allowedHosts: ["*"],
      },
    );
    expect(result).toMatchObject({ ok: false, error: expect.stringContaining("declares by name") });
    expect(receiver.requests.length).toBe(before);
  });

  it("reports a refusing receiver as a value, and a missing URL as an error", async () => {
    const refused = await runBinding(
      webhook,
      "send",
      { event: "x" },
      { env: { WEBHOOK_URL: `${receiver.baseUrl}/refuse` }, allowedHosts: ["127.0.0.1"] },
    );
    expect(refused).toMatchObject({
      ok: true,
      value: { delivered: false, status: 422, response: { error: "unknown event" } },
    });
    expect(
      await runBinding(webhook, "send", { event: "x" }, { env: {}, allowedHosts: ["127.0.0.1"] }),
    ).toMatchObject({
      ok: false,
      error: "WEBHOOK_URL is not set for this toolset; an admin sets it in the console",
    });
  });
});
