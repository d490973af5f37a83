/**
 * The engine over the real Prisma stores (SQLite file): runs, decisions, approvals, grants,
 * images and events land in the database; a decision taken on another instance reaches the
 * waiting run; a restart expires approvals of runs that died with the old process.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../core/capabilities/types";
import { makePng } from "../core/testing/png";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "./index";
import { countTransactions } from "./testing/count-transactions";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-engine-svc-"));
let db: Db;
let engine: ServerEngine;
let other: ServerEngine | undefined;
let userId: string;
let session: Session;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "engine.db") };
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
  engine = await startServerEngine({
    db,
    ports: createPrismaPorts(db),
    instanceId: "inst-a",
    workers: 1,
  });
});

afterAll(async () => {
  await engine?.shutdown();
  await other?.shutdown();
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function waitForPending(): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const row = await db.approval.findFirst({ where: { status: "pending" }, select: { id: true } });
    if (row) return row.id;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("no approval was requested");
}

const SAVE_IMAGE = `import { save } from "toolstore/assets";
export default async (input) => { const a = await save({ data_base64: input.png, name: "dot" }); return a.width; };`;

describe("engine over Prisma", () => {
  it("persists the run, the approval, the decision, the image and the live events", async () => {
    const png = makePng(2, 3).toString("base64");
    const running = engine.run({ session, code: SAVE_IMAGE, input: { png }, title: "save a dot" });
    const approvalId = await waitForPending();
    const approval = await db.approval.findUniqueOrThrow({ where: { id: approvalId } });
    expect(approval).toMatchObject({
      capability: "assets.save",
      category: "write",
      requestedBy: "alice (playground)",
    });
    expect(JSON.parse(approval.argsSnapshot)).toEqual({ data_base64: png, name: "dot" });

    await engine.approvals.decide({ approvalId, answer: "once", decidedBy: { userId, label: "Alice" } });
    const { runId, envelope } = await running;
    expect(envelope).toMatchObject({
      ok: true,
      result: 2,
      images: [{ mime: "image/png", width: 2, height: 3 }],
    });

    const run = await db.actionRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ status: "ok", instanceId: "inst-a", title: "save a dot" });
    expect(JSON.parse(run.envelope ?? "{}")).toEqual(envelope);
    const decisions = await db.gateDecisionRecord.findMany({ where: { runId } });
    expect(decisions).toMatchObject([
      { capability: "assets.save", decision: "allow", approvalId, reason: "approved once" },
    ]);
    expect((await db.approval.findUniqueOrThrow({ where: { id: approvalId } })).consumedAt).not.toBeNull();
    expect(await db.imageAsset.count({ where: { runId } })).toBe(1);
    const types = (await db.event.findMany({ orderBy: { seq: "asc" }, select: { type: true } })).map(
      (e) => e.type,
    );
    expect(types).toEqual(
      expect.arrayContaining([
        "run.started",
        "approval.requested",
        "approval.decided",
        "gate.decision",
        "run.finished",
      ]),
    );
  });

  it("a run that makes only read calls is one commit: its row, decisions, audit entries, events and envelope", async () => {
    const before = await db.auditEntry.count();
    const transactions = countTransactions(db);
    let result: Awaited<ReturnType<ServerEngine["run"]>>;
    try {
      result = await engine.run({
        session: { ...session, mode: "auto" },
        code: `import { list } from "toolstore/assets";
export default async () => { await list({}); const b = await list({ limit: 1 }); return b.length; };`,
      });
    } finally {
      transactions.restore();
    }
    expect(result.envelope.ok).toBe(true);
    expect(transactions.count).toBe(1);
    const run = await db.actionRun.findUniqueOrThrow({ where: { id: result.runId } });
    expect(run.status).toBe("ok");
    const decisions = await db.gateDecisionRecord.findMany({ where: { runId: result.runId } });
    expect(decisions.map((d) => [d.capability, d.decision])).toEqual([
      ["assets.list", "allow"],
      ["assets.list", "allow"],
    ]);
    expect(await db.auditEntry.count()).toBe(before + 2);
    const events = await db.event.findMany({ where: { payload: { contains: result.runId } } });
    expect(events.map((e) => e.type)).toEqual([
      "run.started",
      "gate.decision",
      "call.finished",
      "gate.decision",
      "call.finished",
      "run.finished",
    ]);
  });

  it("runs whose rows share a group commit all land, whatever order their rows queued in", async () => {
    const auto = { ...session, mode: "auto" as const };
    // B starts once A's first decision is queued, so B's run row queues after the decision insert
    // that B's own decision joins; that insert must still be written after B's row.
    let startB: () => void = () => {};
    const aDecided = new Promise<void>((resolve) => {
      startB = resolve;
    });
    const slow = engine.run({
      session: auto,
      code: `import { list } from "toolstore/assets";
export default async () => { for (let i = 0; i < 30; i++) await list({}); return "a"; };`,
      onEvent: (event) => {
        if (event.type === "gate.decision") startB();
      },
    });
    await aDecided;
    const quick = engine.run({
      session: auto,
      code: `import { list } from "toolstore/assets";
export default async () => { await list({}); return "b"; };`,
    });
    const results = await Promise.all([slow, quick]);
    expect(results.map((r) => r.envelope.error?.message ?? r.envelope.ok)).toEqual([true, true]);
    expect(await db.gateDecisionRecord.count({ where: { runId: results[0]?.runId } })).toBe(30);
    expect(await db.gateDecisionRecord.count({ where: { runId: results[1]?.runId } })).toBe(1);
  });

  it("decides by compare-and-set in the database", async () => {
    const running = engine.run({
      session,
      code: SAVE_IMAGE,
      input: { png: makePng(1, 1).toString("base64") },
    });
    const approvalId = await waitForPending();
    await engine.approvals.decide({ approvalId, answer: "deny", decidedBy: { userId, label: "Alice" } });
    await expect(
      engine.approvals.decide({ approvalId, answer: "once", decidedBy: { userId, label: "Alice" } }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    const { envelope } = await running;
    expect(envelope.error?.message).toMatch(/permission_denied/);
  });

  it("allow for session is stored as a grant and skips the next prompt", async () => {
    const grantSession = { ...session, id: "console-session-2" };
    const first = engine.run({
      session: grantSession,
      code: SAVE_IMAGE,
      input: { png: makePng(1, 2).toString("base64") },
    });
    const approvalId = await waitForPending();
    await engine.approvals.decide({ approvalId, answer: "session", decidedBy: { userId, label: "Alice" } });
    expect((await first).envelope.ok).toBe(true);
    expect(
      await db.sessionGrant.count({ where: { sessionId: "console-session-2", capability: "assets.save" } }),
    ).toBe(1);
    const second = await engine.run({
      session: grantSession,
      code: SAVE_IMAGE,
      input: { png: makePng(1, 2).toString("base64") },
    });
    expect(second.envelope).toMatchObject({
      ok: true,
      calls: [{ decision: "allow", reason: "allowed for this session" }],
    });
  });

  it("a decision taken on another instance reaches the waiting run", async () => {
    other = await startServerEngine({
      db,
      ports: createPrismaPorts(db),
      instanceId: "inst-b",
      workers: 1,
    });
    const running = engine.run({
      session,
      code: SAVE_IMAGE,
      input: { png: makePng(4, 4).toString("base64") },
    });
    const approvalId = await waitForPending();
    await other.approvals.decide({ approvalId, answer: "once", decidedBy: { userId, label: "Alice" } });
    expect((await running).envelope).toMatchObject({ ok: true, result: 4 });
  });

  it("after a restart, approvals of runs whose process is gone are expired and the runs closed", async () => {
    const run = await db.actionRun.create({
      data: { sessionId: "s", surface: "mcp", code: "", mode: "default", instanceId: "inst-dead" },
    });
    const approval = await db.approval.create({
      data: {
        runId: run.id,
        sessionId: "s",
        capability: "assets.save",
        category: "write",
        argsSnapshot: "{}",
        argsHash: "h",
        requestedBy: "key",
        expiresAt: new Date(Date.now() + 60_000),
      },
    });
    const restarted = await startServerEngine({
      db,
      ports: createPrismaPorts(db),
      instanceId: "inst-c",
      workers: 1,
    });
    await restarted.shutdown();
    expect((await db.approval.findUniqueOrThrow({ where: { id: approval.id } })).status).toBe("expired");
    expect((await db.actionRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("interrupted");
  });

  it("prunes the event outbox from its sweep, with no console listening", async () => {
    // The outbox's order is its times' order (pruneEvents relies on it): start it afresh.
    await db.event.deleteMany({});
    const old = await db.event.create({
      data: { type: "test.old", payload: "null", createdAt: new Date(Date.now() - 25 * 60 * 60 * 1000) },
    });
    const fresh = await db.event.create({ data: { type: "test.fresh", payload: "null" } });
    const sweeping = await startServerEngine({
      db,
      ports: createPrismaPorts(db),
      instanceId: "inst-prune",
      workers: 1,
      heartbeatMs: 50,
    });
    try {
      for (let i = 0; i < 100 && (await db.event.count({ where: { seq: old.seq } })) > 0; i++) {
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(await db.event.count({ where: { seq: old.seq } })).toBe(0);
      expect(await db.event.count({ where: { seq: fresh.seq } })).toBe(1);
    } finally {
      await sweeping.shutdown();
    }
  });
});
