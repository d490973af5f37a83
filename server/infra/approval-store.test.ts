/**
 * The Prisma approval store's pending listing as recovery asks for it, on a real SQLite file:
 * the requests parked runs wait for are not read (any instance resumes those), everything else
 * recovery must judge still is.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createPrismaApprovalStore } from "./approval-store";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-approval-store-"));
let db: Db;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "approvals.db") };
  await deployMigrations(target);
  db = createDb(target);
});

afterAll(async () => {
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function run(id: string, status: string) {
  await db.actionRun.create({
    data: { id, sessionId: "s", surface: "mcp", code: "x", mode: "default", instanceId: "i", status },
  });
}

async function approval(id: string, runId: string | null, expiresAt: number) {
  await db.approval.create({
    data: {
      id,
      runId,
      sessionId: "s",
      capability: "fs.write",
      category: "write",
      argsSnapshot: "{}",
      argsHash: "h",
      requestedBy: "agent",
      expiresAt: new Date(expiresAt),
    },
  });
}

describe("pending approvals as recovery lists them", () => {
  it("[DURABLE]: leaves out a parked run's request until its time is up, and keeps every other", async () => {
    const now = Date.now();
    await run("parked", "waiting");
    await run("parked-late", "waiting");
    await run("running", "running");
    await approval("of-parked", "parked", now + 60_000);
    await approval("of-parked-late", "parked-late", now - 1_000);
    await approval("of-running", "running", now + 60_000);
    await approval("direct", null, now + 60_000);
    const store = createPrismaApprovalStore(db);
    const ids = async (filter?: Parameters<typeof store.listPending>[0]) =>
      (await store.listPending(filter)).map((r) => r.id).sort();
    expect(await ids()).toEqual(["direct", "of-parked", "of-parked-late", "of-running"]);
    expect(await ids({ exceptParkedAt: now })).toEqual(["direct", "of-parked-late", "of-running"]);
    expect(await ids({ exceptParkedAt: now, expiresBy: now })).toEqual(["of-parked-late"]);
  });

  it("[DURABLE]: lists a run's open requests, pending or allowed and unused, for a replay to adopt", async () => {
    const now = Date.now();
    await run("replayed", "running");
    for (const id of ["open-pending", "open-allowed", "used", "denied", "expired"]) {
      await approval(id, "replayed", now + 60_000);
    }
    await approval("other-run", "running", now + 60_000);
    const store = createPrismaApprovalStore(db);
    const decided = { scope: "once" as const, decidedById: null };
    expect(await store.decide("open-allowed", { status: "allowed", ...decided }, now)).toBe(true);
    expect(await store.decide("used", { status: "allowed", ...decided }, now)).toBe(true);
    expect(await store.consume("used", "h", now)).toBe(true);
    expect(await store.decide("denied", { status: "denied", scope: null, decidedById: null }, now)).toBe(
      true,
    );
    expect(await store.expire("expired")).toBe(true);
    const open = (await store.listOpenForRun("replayed")).map((r) => r.id).sort();
    expect(open).toEqual(["open-allowed", "open-pending"]);
  });
});
