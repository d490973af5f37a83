import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createEventBus, type EventBus } from "../infra/events";
import { listActiveGrants, listApprovalQueue, revokeSessionGrants } from "./approval-queue";
import { type RunWatchItem, watchRun } from "./run-watch";
import { getRunDetail, listRuns, parseRunFilters } from "./runs";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-history-"));
let db: Db;
let bus: EventBus;
let userId: string;
let keyId: string;

async function addRun(
  id: string,
  data: { surface?: string; status?: string; apiKeyId?: string | null; startedAt: Date; caps?: string[] },
) {
  await db.actionRun.create({
    data: {
      id,
      sessionId: "s-1",
      surface: data.surface ?? "playground",
      userId,
      apiKeyId: data.apiKeyId ?? null,
      title: `run ${id}`,
      code: "export default async () => 1",
      mode: "default",
      status: data.status ?? "ok",
      instanceId: "i",
      startedAt: data.startedAt,
    },
  });
  for (const capability of data.caps ?? []) {
    await db.gateDecisionRecord.create({
      data: { runId: id, sessionId: "s-1", capability, category: "read", decision: "allow", argsHash: "h" },
    });
  }
}

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "h.db") };
  await deployMigrations(target);
  db = createDb(target);
  bus = createEventBus(db, { pollMs: 20 });
  userId = (
    await db.user.create({
      data: { username: "alice", displayName: "Alice", role: "admin", passwordHash: "x" },
    })
  ).id;
  keyId = (
    await db.apiKey.create({ data: { name: "laptop-claude", prefix: "ts_ab", keyHash: "kh", userId } })
  ).id;
  const t0 = Date.UTC(2026, 0, 1);
  await addRun("r1", { startedAt: new Date(t0), caps: ["store.list", "assets.save"] });
  await addRun("r2", { startedAt: new Date(t0 + 1000), status: "error", caps: ["weather.forecast"] });
  await addRun("r3", {
    startedAt: new Date(t0 + 2000),
    surface: "mcp",
    apiKeyId: keyId,
    caps: ["store.list"],
  });
});
afterAll(async () => {
  bus.close();
  await db.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("runs history", () => {
  it("filters by surface, status, key and capability (module.* too), newest first", async () => {
    const ids = async (q: Record<string, string>) =>
      (await listRuns(db, parseRunFilters(q))).runs.map((r) => r.id);
    expect(await ids({})).toEqual(["r3", "r2", "r1"]);
    expect(await ids({ surface: "mcp" })).toEqual(["r3"]);
    expect(await ids({ status: "error" })).toEqual(["r2"]);
    expect(await ids({ key: keyId })).toEqual(["r3"]);
    expect(await ids({ capability: "store.list" })).toEqual(["r3", "r1"]);
    expect(await ids({ capability: "weather.*" })).toEqual(["r2"]);
    expect(await ids({ before: "r3" })).toEqual(["r2", "r1"]);
    // Unknown values are dropped, never an error.
    expect(await ids({ status: "bogus", surface: "" })).toEqual(["r3", "r2", "r1"]);
  });

  it("names the key or the user, and counts the calls", async () => {
    const { runs } = await listRuns(db, parseRunFilters({}));
    expect(runs[0]).toMatchObject({ id: "r3", who: 'key "laptop-claude"', calls: 1 });
    expect(runs[2]).toMatchObject({ id: "r1", who: "Alice", calls: 2 });
  });

  it("builds the timeline from decisions and approvals, with who decided", async () => {
    const approval = await db.approval.create({
      data: {
        runId: "r1",
        sessionId: "s-1",
        capability: "assets.save",
        category: "write",
        argsSnapshot: "{}",
        argsHash: "h",
        requestedBy: "alice (playground)",
        status: "allowed",
        scope: "once",
        decidedById: userId,
        decidedAt: new Date(),
        expiresAt: new Date(Date.now() + 60_000),
      },
    });
    await db.gateDecisionRecord.updateMany({
      where: { runId: "r1", capability: "assets.save" },
      data: { approvalId: approval.id, ms: 1500 },
    });
    await db.approval.create({
      data: {
        runId: "r1",
        sessionId: "s-1",
        capability: "webhook.send",
        category: "write",
        argsSnapshot: "{}",
        argsHash: "h2",
        requestedBy: "alice (playground)",
        status: "expired",
        expiresAt: new Date(),
      },
    });
    const run = await getRunDetail(db, "r1");
    const byCap = Object.fromEntries(run.timeline.map((r) => [r.capability, r]));
    expect(byCap["store.list"]).toMatchObject({ state: "allow", approval: null });
    expect(byCap["assets.save"]).toMatchObject({
      state: "allow",
      ms: 1500,
      approval: { status: "allowed", scope: "once", decidedBy: "Alice" },
    });
    expect(byCap["webhook.send"]).toMatchObject({ state: "expired", ms: null });
    await expect(getRunDetail(db, "nope")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("approval queue", () => {
  it("splits pending from history and revokes a session's grants in one action", async () => {
    await db.approval.create({
      data: {
        sessionId: "mcp-7",
        capability: "notes.save",
        category: "write",
        argsSnapshot: '{"title":"Q3"}',
        argsHash: "h3",
        requestedBy: 'key "laptop-claude"',
        apiKeyId: keyId,
        expiresAt: new Date(Date.now() + 60_000),
      },
    });
    const grantApproval = await db.approval.findFirstOrThrow({ where: { capability: "assets.save" } });
    await db.sessionGrant.createMany({
      data: [
        { sessionId: "s-1", capability: "assets.save", approvalId: grantApproval.id, grantedById: userId },
        { sessionId: "s-1", capability: "notes.save" },
        { sessionId: "s-2", capability: "notes.save" },
      ],
    });
    const queue = await listApprovalQueue(db);
    expect(queue.pending.map((p) => p.capability)).toEqual(["notes.save"]);
    expect(queue.pending[0]).toMatchObject({ apiKeyName: "laptop-claude", argsJson: '{"title":"Q3"}' });
    expect(queue.history.map((h) => h.status).sort()).toEqual(["allowed", "expired"]);
    const s1 = queue.grants.find((g) => g.sessionId === "s-1");
    expect(s1?.label).toBe("alice (playground)");
    expect(s1?.capabilities.map((c) => c.capability).sort()).toEqual(["assets.save", "notes.save"]);

    const seen: string[] = [];
    const ac = new AbortController();
    const listening = (async () => {
      for await (const e of bus.subscribe({ signal: ac.signal, afterSeq: 0, types: ["grants.revoked"] })) {
        seen.push(JSON.stringify(e.payload));
        ac.abort();
      }
    })();
    expect(await revokeSessionGrants(db, "s-1", { username: "alice" }, bus)).toEqual({ revoked: 2 });
    await listening;
    expect(seen).toEqual([JSON.stringify({ sessionId: "s-1", count: 2, by: "alice" })]);
    expect((await listActiveGrants(db)).map((g) => g.sessionId)).toEqual(["s-2"]);
    expect(await revokeSessionGrants(db, "s-1", { username: "alice" }, bus)).toEqual({ revoked: 0 });
  });
});

describe("run watch", () => {
  async function collect(runId: string, afterSeq: number): Promise<RunWatchItem[]> {
    const items: RunWatchItem[] = [];
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 5000);
    for await (const item of watchRun(db, { runId, afterSeq, signal: ac.signal, bus })) items.push(item);
    clearTimeout(timer);
    return items;
  }

  it("follows one run's events live and ends with its stored envelope", async () => {
    await addRun("live", { status: "running", startedAt: new Date() });
    const start = (await bus.publish("noise", {})).seq;
    const watching = collect("live", start);
    await bus.publish("gate.decision", { runId: "other", capability: "x.y", decision: "allow" });
    await bus.publish("gate.decision", { runId: "live", capability: "store.list", decision: "allow" });
    await bus.publish("approval.requested", { approval: { id: "a1", runId: "live" } });
    const envelope = { ok: true, result: 2, logs: [], calls: [], images: [], durationMs: 5 };
    await db.actionRun.update({
      where: { id: "live" },
      data: { status: "ok", envelope: JSON.stringify(envelope) },
    });
    await bus.publish("run.finished", { runId: "live", ok: true });
    const items = await watching;
    expect(items.map((i) => (i.kind === "event" ? i.type : "finished"))).toEqual([
      "gate.decision",
      "approval.requested",
      "finished",
    ]);
    expect(items[2]).toMatchObject({ kind: "finished", status: "ok", envelope });

    // Watching it again later replays from the outbox and ends at once.
    const again = await collect("live", start);
    expect(again.map((i) => i.kind)).toEqual(["event", "event", "finished"]);
  });
});
