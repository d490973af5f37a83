/**
 * Notifications end to end over the real engine and a SQLite file: a webhook receiver, Slack and
 * ntfy shapes, Web Push decrypted as a browser would, email through a real SMTP server, retries
 * against a failing receiver (the gate does not wait for it), grouping, filters and reminders.
 */
import { createHmac } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { JsonObject, Session } from "../../core/capabilities/types";
import { createCanaryModule } from "../../core/testing/fixtures";
import { createDb, type Db } from "../../db";
import { deployMigrations } from "../../db/migrate";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "../../engine";
import { getMetrics } from "../../infra/metrics";
import { addEmail, addPushSubscription, addWebhook, queueTest, setPreference } from "./channels";
import { planDeliveries } from "./planner";
import {
  browserPushKeys,
  decryptPush,
  type HttpReceiver,
  type SmtpReceiver,
  startHttpReceiver,
  startSmtpReceiver,
} from "./testing/receivers";
import { vapidPublicKey } from "./vapid";

const PUBLIC_URL = "http://console.test:3000";
const SECRET = "whsec-0123456789abcdef";
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-notify-"));
let db: Db;
let engine: ServerEngine;
let receiver: HttpReceiver;
let smtp: SmtpReceiver;
let userId: string;
let session: Session;

beforeAll(async () => {
  process.env.TOOLSTORE_SECRET_KEY = Buffer.alloc(32, 7).toString("base64");
  const target = { provider: "sqlite" as const, url: path.join(dir, "notify.db") };
  await deployMigrations(target);
  db = createDb(target);
  userId = (
    await db.user.create({
      data: { username: "alice", displayName: "Alice", role: "admin", passwordHash: "x" },
    })
  ).id;
  session = {
    id: "console-session-1",
    userId,
    surface: "playground",
    mode: "default",
    mountedModules: ["*"],
    actorLabel: "alice (playground)",
  };
  smtp = await startSmtpReceiver();
  engine = await startServerEngine({
    db,
    ports: createPrismaPorts(db),
    instanceId: "notify-a",
    workers: 1,
    extraModules: [() => [createCanaryModule()]],
    notifications: {
      publicUrl: PUBLIC_URL,
      smtpUrl: smtp.url,
      smtpFrom: "ToolStore <bot@toolstore.test>",
      tickMs: 100,
      retryBaseMs: 200,
    },
  });
});

afterEach(async () => {
  await receiver?.close();
  await db.notificationChannel.deleteMany({});
  await db.notificationPreference.deleteMany({});
});

afterAll(async () => {
  await engine?.shutdown();
  await smtp?.close();
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function until<T>(
  read: () => T | Promise<T>,
  ok: (v: T) => boolean,
  ms = 8_000,
): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) && v !== undefined && v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out; last value: ${JSON.stringify(v)?.slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Starts an action that calls canary.<category> and waits until its approval is pending. */
async function request(category: string, args: JsonObject) {
  const before = new Set((await db.approval.findMany({ select: { id: true } })).map((a) => a.id));
  const code = `import { ${category} } from "toolstore/canary";
export default async (input) => ${category}(input);`;
  const running = engine.run({ session, code, input: args });
  const approval = await until(
    () => db.approval.findFirst({ where: { status: "pending", id: { notIn: [...before] } } }),
    (a) => a !== null,
  );
  const allow = async () => {
    await engine.approvals.decide({
      approvalId: approval.id,
      answer: "once",
      decidedBy: { userId, label: "Alice" },
    });
    return running;
  };
  return { approval, running, allow };
}

function bodies(r: HttpReceiver) {
  return r.requests.map((q) => JSON.parse(q.body.toString("utf8")));
}

describe("[NOTIFICATIONS] webhooks", () => {
  it("a signed generic webhook arrives within 2 s with the card link and no secrets", async () => {
    receiver = await startHttpReceiver();
    await addWebhook(db, { url: `${receiver.url}/hook`, format: "json", secret: SECRET });
    const { approval, allow } = await request("write", {
      value: "Q3 plan",
      api_key: "sk-live-abcdef0123456789",
    });
    const hit = await until(
      () => receiver.requests[0],
      (r) => r !== undefined,
    );
    expect(hit.at - approval.createdAt.getTime()).toBeLessThan(2_000);

    const raw = hit.body.toString("utf8");
    const timestamp = String(hit.headers["x-toolstore-timestamp"]);
    const expected = createHmac("sha256", SECRET).update(`${timestamp}.${raw}`).digest("hex");
    expect(hit.headers["x-toolstore-signature"]).toBe(`v1=${expected}`);
    expect(Math.abs(Number(timestamp) * 1000 - Date.now())).toBeLessThan(60_000);

    const body = JSON.parse(raw);
    expect(body).toMatchObject({
      type: "approval.request",
      url: `${PUBLIC_URL}/approvals/${approval.id}`,
      approvals: [
        {
          id: approval.id,
          capability: "canary.write",
          category: "write",
          requestedBy: "alice (playground)",
          url: `${PUBLIC_URL}/approvals/${approval.id}`,
        },
      ],
    });
    expect(body.approvals[0].argsSummary).toContain('value: "Q3 plan"');
    expect(raw).not.toContain("sk-live");
    expect(body.title).toContain("canary.write");
    const { envelope } = await allow();
    expect(envelope.ok).toBe(true);
    const delivery = await db.notificationDelivery.findFirstOrThrow({ where: { kind: "request" } });
    expect(delivery).toMatchObject({ status: "sent", attempts: 1 });
    const channel = await db.notificationChannel.findFirstOrThrow();
    expect(channel.lastOkAt).not.toBeNull();
    expect(channel.sealed).not.toContain(SECRET);
    // The engine's notifier counts the delivery for /metrics.
    expect(await getMetrics().render()).toMatch(
      /toolstore_notification_deliveries_total\{channel="webhook",outcome="delivered"\} [1-9]/,
    );
  });

  it("with no channel on, rounds read no approvals; a channel turned on hears of requests made after it", async () => {
    const before = await request("write", { value: "before any channel" });
    // No round claims it while no channel is on (before, each round read the approvals and
    // claimed this one for zero channels).
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await db.notificationClaim.count({ where: { approvalId: before.approval.id } })).toBe(0);

    receiver = await startHttpReceiver();
    await addWebhook(db, { url: `${receiver.url}/hook`, format: "json", secret: SECRET });
    const after = await request("write", { value: "after the channel" });
    const hit = await until(
      () => receiver.requests[0],
      (r) => r !== undefined,
    );
    // The backlog is not announced: only the request made after the channel was added.
    expect(JSON.parse(hit.body.toString("utf8")).approvals.map((a: { id: string }) => a.id)).toEqual([
      after.approval.id,
    ]);
    expect((await before.allow()).envelope.ok).toBe(true);
    expect((await after.allow()).envelope.ok).toBe(true);
    expect(receiver.requests).toHaveLength(1);
  });

  it("Slack and ntfy receive their documented shapes", async () => {
    receiver = await startHttpReceiver();
    await addWebhook(db, { url: `${receiver.url}/services/T000/B000/XXXX`, format: "slack" });
    await addWebhook(db, {
      url: `${receiver.url}/approvals-topic`,
      format: "ntfy",
      secret: "tk_ntfyaccesstoken123",
    });
    const { approval, allow } = await request("external", { value: "ping" });
    await until(
      () => receiver.requests.length,
      (n) => n >= 2,
    );
    const slack = receiver.requests.find((r) => r.path === "/services/T000/B000/XXXX");
    const ntfy = receiver.requests.find((r) => r.path === "/");
    if (!slack || !ntfy) throw new Error(`paths: ${receiver.requests.map((r) => r.path)}`);
    const link = `${PUBLIC_URL}/approvals/${approval.id}`;

    // https://api.slack.com/messaging/webhooks: `text` (the fallback) and Block Kit `blocks`.
    const s = JSON.parse(slack.body.toString());
    expect(typeof s.text).toBe("string");
    expect(s.text).toContain(link);
    for (const block of s.blocks) expect(["header", "section", "actions"]).toContain(block.type);
    expect(s.blocks[0]).toEqual({
      type: "header",
      text: { type: "plain_text", text: expect.any(String), emoji: false },
    });
    expect(s.blocks[1].text).toMatchObject({
      type: "mrkdwn",
      text: expect.stringContaining("canary.external"),
    });
    expect(s.blocks.at(-1).elements[0]).toMatchObject({
      type: "button",
      text: { type: "plain_text" },
      url: link,
    });

    // https://docs.ntfy.sh/publish/#publish-as-json: POST to the root, topic in the body.
    const n = JSON.parse(ntfy.body.toString());
    expect(ntfy.headers.authorization).toBe("Bearer tk_ntfyaccesstoken123");
    expect(n).toMatchObject({
      topic: "approvals-topic",
      title: expect.stringContaining("canary.external"),
      message: expect.stringContaining(link),
      click: link,
      tags: expect.any(Array),
      actions: [{ action: "view", label: "Open the card", url: link }],
    });
    expect(n.priority).toBeGreaterThanOrEqual(1);
    expect(n.priority).toBeLessThanOrEqual(5);
    await allow();
  });

  it("a receiver that fails twice gets the message once, and the gate does not wait for it", async () => {
    receiver = await startHttpReceiver();
    await addWebhook(db, { url: `${receiver.url}/flaky` });
    let firstId = "";
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let aboutFirst = 0;
    // The first attempt fails slowly: the receiver holds it open until the test lets it go.
    receiver.answer = (req) => {
      if (!firstId || !req.body.toString().includes(firstId)) return { status: 200 };
      aboutFirst += 1;
      if (aboutFirst === 1) return { status: 500, until: held };
      return { status: aboutFirst === 2 ? 500 : 200 };
    };
    const first = await request("write", { value: "first" });
    firstId = first.approval.id;
    await until(
      () => aboutFirst,
      (n) => n >= 1,
    );
    // While the receiver sits on the failing answer, another call asks, is allowed and returns.
    const second = await request("write", { value: "second" });
    const { envelope } = await second.allow();
    expect(envelope.ok).toBe(true);
    expect(aboutFirst).toBe(1);
    expect(
      (await db.notificationDelivery.findFirstOrThrow({ where: { approvalIds: { contains: firstId } } }))
        .status,
    ).toBe("sending");
    release();

    const channel = await until(
      () => db.notificationChannel.findFirstOrThrow(),
      (c) => c.lastError !== null,
    );
    expect(channel.lastError).toContain("HTTP 500");
    await until(
      () => aboutFirst,
      (n) => n >= 3,
    );
    const delivery = await until(
      () => db.notificationDelivery.findFirstOrThrow({ where: { approvalIds: { contains: firstId } } }),
      (d) => d.status === "sent",
    );
    expect(delivery.attempts).toBe(3);
    await new Promise((r) => setTimeout(r, 800));
    expect(aboutFirst).toBe(3);
    expect((await db.notificationChannel.findFirstOrThrow()).lastError).toBeNull();
    await first.allow();
  });

  it("a burst is one message; a user's filter decides whether they hear of it", async () => {
    receiver = await startHttpReceiver();
    await addWebhook(db, { url: `${receiver.url}/mine`, userId });
    await setPreference(db, userId, { mode: "matching", categories: ["execute"] });
    const code = `import { write, execute } from "toolstore/canary";
export default async () => Promise.all([write({ value: "a" }), execute({ value: "b" }), execute({ value: "c" })]);`;
    const running = engine.run({ session, code });
    const pending = await until(
      () => db.approval.findMany({ where: { status: "pending" } }),
      (r) => r.length === 3,
    );
    const hit = await until(
      () => bodies(receiver),
      (b) => b.length >= 1,
    );
    await new Promise((r) => setTimeout(r, 600));
    expect(bodies(receiver)).toHaveLength(1);
    expect(hit[0].title).toBe("2 approvals are waiting");
    expect(hit[0].approvals.map((a: { capability: string }) => a.capability)).toEqual([
      "canary.execute",
      "canary.execute",
    ]);
    expect(hit[0].url).toBe(`${PUBLIC_URL}/approvals`);
    // Denying one ends the action; its other requests close with it.
    await engine.approvals.decide({
      approvalId: pending[0]?.id ?? "",
      answer: "deny",
      decidedBy: { userId, label: "Alice" },
    });
    expect((await running).envelope.ok).toBe(false);
  });

  it("a viewer's channel is never told", async () => {
    receiver = await startHttpReceiver();
    const viewer = await db.user.create({
      data: { username: "vic", displayName: "Vic", role: "viewer", passwordHash: "x" },
    });
    await addWebhook(db, { url: `${receiver.url}/viewer`, userId: viewer.id });
    const { allow } = await request("write", { value: "x" });
    await new Promise((r) => setTimeout(r, 900));
    expect(receiver.requests).toHaveLength(0);
    await allow();
  });
});

describe("[NOTIFICATIONS] web push and email", () => {
  it("a Web Push message decrypts with the subscription's keys and carries the card link", async () => {
    receiver = await startHttpReceiver();
    receiver.answer = () => ({ status: 201 });
    const browser = browserPushKeys();
    await addPushSubscription(db, {
      endpoint: `${receiver.url}/push/send/abc123`,
      keys: browser.keys,
      deviceName: "Test phone",
      userId,
    });
    const { approval, allow } = await request("write", { value: "from push" });
    const hit = await until(
      () => receiver.requests[0],
      (r) => r !== undefined,
    );
    expect(hit.path).toBe("/push/send/abc123");
    expect(hit.headers["content-encoding"]).toBe("aes128gcm");
    const publicKey = await vapidPublicKey(db);
    expect(hit.headers.authorization).toMatch(
      new RegExp(`^vapid t=[\\w-]+\\.[\\w-]+\\.[\\w-]+, k=${publicKey}$`),
    );
    const payload = JSON.parse(decryptPush(hit.body, browser));
    expect(payload).toMatchObject({
      title: expect.stringContaining("canary.write"),
      url: `${PUBLIC_URL}/approvals/${approval.id}`,
      tag: `approval-${approval.id}`,
    });
    await allow();
  });

  it("a push service answering 410 turns that device off with a clear error", async () => {
    receiver = await startHttpReceiver();
    receiver.answer = () => ({ status: 410 });
    await addPushSubscription(db, {
      endpoint: `${receiver.url}/push/gone`,
      keys: browserPushKeys().keys,
      deviceName: "Old tablet",
      userId,
    });
    const { allow } = await request("write", { value: "x" });
    const channel = await until(
      () => db.notificationChannel.findFirstOrThrow(),
      (c) => !c.enabled,
    );
    expect(channel.lastError).toContain("turn push on again");
    await allow();
  });

  it("an email reaches the SMTP server", async () => {
    await addEmail(db, { address: "alice@example.com", userId });
    const { approval, allow } = await request("execute", { value: "rm -rf build" });
    const mail = await until(
      () => smtp.messages.at(-1),
      (m) => m !== undefined,
    );
    expect(mail.to).toEqual(["alice@example.com"]);
    expect(mail.from).toBe("bot@toolstore.test");
    expect(mail.raw).toMatch(/Subject: Approve canary\.execute \(execute\)\?/);
    expect(mail.raw.replace(/=\r?\n/g, "")).toContain(`${PUBLIC_URL}/approvals/${approval.id}`);
    await allow();
  });

  it("a test message goes out on demand", async () => {
    receiver = await startHttpReceiver();
    const channel = await addWebhook(db, { url: `${receiver.url}/t` });
    await queueTest(db, channel.id);
    const [body] = await until(
      () => bodies(receiver),
      (b) => b.length === 1,
    );
    expect(body).toMatchObject({
      type: "approval.test",
      title: "ToolStore test notification",
      approvals: [],
    });
  });
});

describe("[NOTIFICATIONS] reminders", () => {
  it("a reminder is queued before expiry, once", async () => {
    await engine.notifier?.stop();
    const channel = await db.notificationChannel.create({
      data: { kind: "webhook", name: "r", target: "http://127.0.0.1:9/r" },
    });
    const now = Date.now();
    const row = await db.approval.create({
      data: {
        sessionId: "s-rem",
        capability: "canary.write",
        category: "write",
        argsSnapshot: "{}",
        argsHash: "h",
        requestedBy: "bot",
        createdAt: new Date(now),
        expiresAt: new Date(now + 60 * 60_000),
      },
    });
    expect(await planDeliveries(db, now + 1_000)).toBe(1);
    expect(await planDeliveries(db, now + 30 * 60_000)).toBe(0);
    // A quarter of the hour before expiry.
    expect(await planDeliveries(db, now + 46 * 60_000)).toBe(1);
    expect(await planDeliveries(db, now + 50 * 60_000)).toBe(0);
    const kinds = await db.notificationDelivery.findMany({
      where: { channelId: channel.id },
      select: { kind: true },
    });
    expect(kinds.map((k) => k.kind).sort()).toEqual(["reminder", "request"]);
    await db.approval.update({ where: { id: row.id }, data: { status: "expired" } });
  });
});
