/**
 * Durability of the served path: the server is killed with SIGKILL between a write
 * call's decision and its impl. After a restart, the audit and the approval rows agree with what
 * ran: the approval and the allow decision were durable before the impl was entered, the read
 * call before it was recorded too, the effect never happened and is not claimed, and recovery
 * marks the run `interrupted` (naming the stopped process and the calls the audit saw) with nothing left pending.
 */
import { fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { type ServerEngine, startServerEngine } from "./index";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-durability-"));
const dbFile = path.join(dir, "durability.db");
const marker = path.join(dir, "ledger.txt");
let db: Db | undefined;
let restarted: ServerEngine | undefined;

afterAll(async () => {
  await restarted?.shutdown();
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

it("keeps audit and approval rows true to what ran when killed between a write's decision and its impl", async () => {
  await deployMigrations({ provider: "sqlite", url: dbFile });
  db = createDb({ provider: "sqlite", url: dbFile });
  const { id: userId } = await db.user.create({
    data: { username: "approver", displayName: "Approver", role: "admin", passwordHash: "x" },
  });

  const child = fork(path.join(import.meta.dirname, "testing/kill-child.ts"), [dbFile, marker, userId], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_c, s) => resolve(s)));
  await new Promise<void>((resolve, reject) => {
    child.on("message", (m: { t?: string }) => {
      if (m.t === "impl-entered") resolve();
    });
    child.once("exit", (code) => reject(new Error(`the server exited (code ${code}) before the impl ran`)));
  });
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");

  // What the dead process left: everything decided before the impl is on disk.
  const [run] = await db.actionRun.findMany({ select: { id: true, status: true } });
  expect(run?.status).toBe("running");
  const approvals = await db.approval.findMany({ select: { capability: true, status: true, runId: true } });
  expect(approvals).toEqual([{ capability: "ledger.append", status: "allowed", runId: run?.id }]);
  const decisions = await db.gateDecisionRecord.findMany({
    where: { runId: run?.id },
    orderBy: { createdAt: "asc" },
    select: { capability: true, decision: true },
  });
  expect(decisions.map((d) => d.capability)).toEqual(["ledger.peek", "ledger.append"]);
  expect(decisions[0]?.decision).toBe("allow");
  expect(fs.existsSync(marker)).toBe(false);

  // Restart once the dead instance's heartbeat is stale (its timeout is simulated by age, not waited
  // for): recovery closes the run; nothing claims the effect, nothing is left to run later.
  await db.setting.update({
    where: { key: "instance:doomed" },
    data: { value: new Date(Date.now() - 10 * 60_000).toISOString() },
  });
  restarted = await startServerEngine({ db, instanceId: "after-restart", workers: 1 });
  const after = await db.actionRun.findUniqueOrThrow({
    where: { id: run?.id },
    select: { status: true, errorKind: true, envelope: true },
  });
  // Interrupted, and the envelope says which calls the audit saw: the write was let through but
  // never reported back, so its outcome is `unknown` (here it did not happen: no marker).
  expect(after.status).toBe("interrupted");
  expect(after.errorKind).toBe("interrupted");
  expect(after.envelope).toMatch(/stopped/);
  const envelope = JSON.parse(after.envelope ?? "{}") as {
    calls?: { capability: string; outcome?: string }[];
  };
  expect(envelope.calls?.find((c) => c.capability === "ledger.append")?.outcome).toBe("unknown");
  expect(await db.approval.count({ where: { status: "pending" } })).toBe(0);
  expect(fs.existsSync(marker)).toBe(false);
}, 120_000);
