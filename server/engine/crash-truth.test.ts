/**
 * What the rows say after a server process dies, over the real Prisma stores on
 * SQLite: the dead process is stood in for by the rows it leaves (a run "running" on an instance
 * whose heartbeat stopped, its approval pending or allowed). The real kill -9 of a real process is
 * in fault-suite.test.ts.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ABANDONED_REASON, RUN_GONE_REASON } from "../core/gate/approvals";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createLivenessCheck, heartbeat } from "../infra/instances";
import { cancelPlaygroundRun, startPlaygroundRun } from "../services/playground";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "./index";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-crash-"));
let db: Db;
let userId: string;
const engines: ServerEngine[] = [];

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "crash.db") };
  await deployMigrations(target);
  db = createDb(target);
  userId = (
    await db.user.create({ data: { username: "alice", displayName: "A", role: "admin", passwordHash: "x" } })
  ).id;
});

afterEach(async () => {
  for (const e of engines.splice(0)) await e.shutdown();
});

afterAll(async () => {
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function start(options: { instanceId: string; address?: string; heartbeatMs?: number }) {
  const engine = await startServerEngine({ db, ports: createPrismaPorts(db), workers: 1, ...options });
  engines.push(engine);
  return engine;
}

/** The rows a process leaves when it is killed while its run waits on an approval. */
async function deadRun(instanceId: string, approval: { status?: string; decidedAt?: Date } = {}) {
  const run = await db.actionRun.create({
    data: { sessionId: "s", surface: "mcp", code: "", mode: "default", instanceId },
  });
  const row = await db.approval.create({
    data: {
      runId: run.id,
      sessionId: "s",
      capability: "http.fetch",
      category: "external",
      argsSnapshot: "{}",
      argsHash: "h",
      requestedBy: 'key "k"',
      expiresAt: new Date(Date.now() + 60_000),
      ...(approval.status ? { status: approval.status, scope: "once", decidedAt: approval.decidedAt } : {}),
    },
  });
  return { runId: run.id, approvalId: row.id };
}

/** The heartbeat row of a process of this host that was killed a moment ago (its pid is gone). */
async function killedBeat(instanceId: string, address: string) {
  const pid = spawnSync(process.execPath, ["-e", ""]).pid;
  const value = JSON.stringify({ at: Date.now(), address, host: os.hostname(), pid });
  await db.setting.create({ data: { key: `instance:${instanceId}`, value } });
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number): Promise<T> {
  const end = Date.now() + ms;
  let value = await read();
  while (!done(value) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    value = await read();
  }
  return value;
}

describe("after a crash every approval and run tells the truth", () => {
  it("[CRASH]: a console Allow for the approval of a killed run is refused with CONFLICT, never `allowed`", async () => {
    const b = await start({ instanceId: "live-b" });
    // The killed instance's heartbeat is older than two beats.
    await heartbeat(db, "killed-a", { now: Date.now() - 60_000 });
    const { approvalId } = await deadRun("killed-a");
    await expect(
      b.approvals.decide({ approvalId, answer: "once", decidedBy: { userId, label: "alice" } }),
    ).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining(RUN_GONE_REASON),
    });
    const row = await db.approval.findUniqueOrThrow({ where: { id: approvalId } });
    expect(row).toMatchObject({ status: "expired", endReason: RUN_GONE_REASON, decidedAt: null });
  });

  it("[CRASH]: a restart on the same address claims its predecessor's runs at once (no timeout to wait out)", async () => {
    // The predecessor's heartbeat is fresh: it was killed a moment ago.
    await killedBeat("boot-1", "host|127.0.0.1:3999");
    const { runId, approvalId } = await deadRun("boot-1");
    await start({ instanceId: "boot-2", address: "host|127.0.0.1:3999" });
    expect((await db.actionRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("interrupted");
    const approval = await db.approval.findUniqueOrThrow({ where: { id: approvalId } });
    expect(approval).toMatchObject({ status: "expired", endReason: RUN_GONE_REASON });
  });

  it("[CRASH]: a live process on the same address (a CLI command beside the server) is never retired", async () => {
    // This test process stands in for the running server: its pid exists.
    await heartbeat(db, "server-1", { address: "host|127.0.0.1:3996" });
    const { runId, approvalId } = await deadRun("server-1");
    await start({ instanceId: "cli-1", address: "host|127.0.0.1:3996" });
    expect((await db.actionRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("running");
    expect((await db.approval.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");
    await db.setting.delete({ where: { key: "instance:server-1" } });
  });

  it("[CRASH]: an Allow committed just before the kill ends `abandoned`, with the reason", async () => {
    await killedBeat("boot-x1", "host|127.0.0.1:3998");
    const { runId, approvalId } = await deadRun("boot-x1", { status: "allowed", decidedAt: new Date() });
    await start({ instanceId: "boot-x2", address: "host|127.0.0.1:3998" });
    const approval = await db.approval.findUniqueOrThrow({ where: { id: approvalId } });
    expect(approval).toMatchObject({ status: "abandoned", endReason: ABANDONED_REASON, consumedAt: null });
    expect((await db.actionRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("interrupted");
    const events = await db.event.findMany({ where: { type: "approval.abandoned" } });
    expect(events.map((e) => JSON.parse(e.payload).approvalId)).toContain(approvalId);
  });

  it("[CRASH]: a second instance finalizes a dead instance's runs within 10 s (default heartbeat)", async () => {
    const b = await start({ instanceId: "watcher-b" });
    expect(b.instanceId).toBe("watcher-b");
    // Instance A beat just now and then died: nothing tells B but the missing heartbeats.
    const diedAt = Date.now();
    await heartbeat(db, "dying-a", { now: diedAt });
    const pending = await deadRun("dying-a");
    const allowed = await deadRun("dying-a", { status: "allowed", decidedAt: new Date() });
    const run = await until(
      () => db.actionRun.findUniqueOrThrow({ where: { id: pending.runId } }),
      (r) => r.status !== "running",
      12_000,
    );
    const finalizedAfter = Date.now() - diedAt;
    expect(run.status).toBe("interrupted");
    expect(finalizedAfter).toBeLessThan(10_000);
    const approvals = await db.approval.findMany({
      where: { id: { in: [pending.approvalId, allowed.approvalId] } },
      orderBy: { createdAt: "asc" },
    });
    expect(approvals.map((a) => a.status)).toEqual(["expired", "abandoned"]);
  }, 20_000);

  it("[CRASH]: the interrupted run's envelope lists the calls the audit saw and whether each completed", async () => {
    await killedBeat("boot-y1", "host|127.0.0.1:3997");
    const run = await db.actionRun.create({
      data: { sessionId: "s", surface: "mcp", code: "", mode: "auto", instanceId: "boot-y1" },
    });
    const decision = (capability: string, decision: string) =>
      db.gateDecisionRecord.create({
        data: { runId: run.id, sessionId: "s", capability, category: "external", decision, argsHash: "h" },
      });
    await decision("http.fetch", "allow");
    await db.event.create({
      data: {
        type: "call.finished",
        payload: JSON.stringify({ runId: run.id, sessionId: "s", capability: "http.fetch", ok: true, ms: 3 }),
      },
    });
    await decision("http.fetch", "allow");
    await decision("assets.save", "deny");
    await start({ instanceId: "boot-y2", address: "host|127.0.0.1:3997" });
    const row = await db.actionRun.findUniqueOrThrow({ where: { id: run.id } });
    expect(row).toMatchObject({ status: "interrupted", errorKind: "interrupted" });
    const envelope = JSON.parse(row.envelope ?? "{}");
    expect(envelope.ok).toBe(false);
    expect(envelope.error.kind).toBe("interrupted");
    expect(
      envelope.calls.map((c: { capability: string; outcome: string }) => [c.capability, c.outcome]),
    ).toEqual([
      ["http.fetch", "completed"],
      ["http.fetch", "unknown"],
      ["assets.save", "not_run"],
    ]);
  });

  it("[CRASH]: a run cancelled from another instance stops, and its pending approval expires at once", async () => {
    const a = await start({ instanceId: "runner-a" });
    const b = await start({ instanceId: "canceller-b" });
    const running = a.run({
      session: {
        id: "cancel-s",
        userId,
        surface: "playground",
        mode: "default",
        mountedModules: ["*"],
        actorLabel: "alice (playground)",
      },
      code: `import { save } from "toolstore/assets";
export default async () => save({ data_base64: "iVBORw0KGgo=", name: "never" });`,
    });
    const approval = await until(
      () => db.approval.findFirst({ where: { sessionId: "cancel-s", status: "pending" } }),
      (r) => r !== null,
      20_000,
    );
    expect(approval).not.toBeNull();
    const runId = approval?.runId ?? "";
    expect(await b.cancel(runId)).toBe(true);
    // At once: the cancelling instance expired the request itself.
    expect((await db.approval.findUniqueOrThrow({ where: { id: approval?.id ?? "" } })).status).toBe(
      "expired",
    );
    const { envelope } = await running;
    expect(envelope.ok).toBe(false);
    expect(envelope.calls[0]?.decision).not.toBe("allow");
    expect((await db.actionRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("error");
    expect(await db.imageAsset.count({ where: { runId } })).toBe(0);
  });

  it("[CRASH]: a playground Cancel that reaches another instance than the one running the action still cancels it", async () => {
    const a = await start({ instanceId: "play-a" });
    const b = await start({ instanceId: "play-b" });
    const alice = {
      id: userId,
      username: "alice",
      displayName: "A",
      role: "admin" as const,
      sessionId: "play-s",
    };
    const { runId } = await startPlaygroundRun(db, a, alice, {
      code: `import { save } from "toolstore/assets";
export default async () => save({ data_base64: "iVBORw0KGgo=", name: "never" });`,
      mode: "default",
    });
    const approval = await until(
      () => db.approval.findFirst({ where: { runId, status: "pending" } }),
      (r) => r !== null,
      20_000,
    );
    if (!approval) console.error(await db.actionRun.findUnique({ where: { id: runId } }));
    expect(approval).not.toBeNull();
    // The Cancel button's request is served by B, which has no handle on A's run.
    await expect(cancelPlaygroundRun(db, b, alice, runId)).resolves.toEqual({ cancelled: true });
    expect((await db.approval.findUniqueOrThrow({ where: { id: approval?.id ?? "" } })).status).toBe(
      "expired",
    );
    const run = await until(
      () => db.actionRun.findUniqueOrThrow({ where: { id: runId } }),
      (r) => r.status !== "running",
      20_000,
    );
    expect(run.status).toBe("error");
    expect(await db.imageAsset.count({ where: { runId } })).toBe(0);
    // A viewer who did not start it may not cancel someone else's run.
    const bob = {
      id: "someone-else",
      username: "bob",
      displayName: "B",
      role: "approver" as const,
      sessionId: "x",
    };
    await expect(cancelPlaygroundRun(db, b, bob, runId)).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});

describe("liveness", () => {
  it("[CRASH]: a host whose clock runs behind is not declared dead while it beats, and is once it stops", async () => {
    let now = 1_000_000_000_000;
    const alive = createLivenessCheck(db, 5_000, () => now);
    // Its clock is 20 s behind ours: every beat looks 20 s old.
    const beat = () => heartbeat(db, "skewed", { now: now - 20_000 });
    await beat();
    expect(await alive("skewed")).toBe(true);
    for (let i = 0; i < 5; i++) {
      now += 2_000;
      await beat();
      expect(await alive("skewed")).toBe(true);
    }
    // It stops: after the timeout of seeing the same beat, it is dead.
    now += 2_000;
    expect(await alive("skewed")).toBe(true);
    now += 3_500;
    expect(await alive("skewed")).toBe(false);
    expect(await alive("never-beat")).toBe(false);
  });
});
