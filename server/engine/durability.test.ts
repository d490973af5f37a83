/**
 * Durability of the served path: the server is killed with SIGKILL between a write
 * call's decision and its impl. After a restart, the audit and the approval rows agree with what
 * ran: the approval and the allow decision were durable before the impl was entered, the read
 * call before it was recorded too, the effect never happened and is not claimed. After the
 * restart the run resumes by replay, and the write, whose outcome was never recorded, is not run
 * again on its own: the queue holds an "uncertain" card; once a human says it had not happened,
 * the replay runs it, exactly once.
 */
import { fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { type ServerEngine, startServerEngine } from "./index";
import { ledgerModule } from "./testing/ledger-module";
import { until } from "./testing/served-process";

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
  restarted = await startServerEngine({
    db,
    instanceId: "after-restart",
    workers: 1,
    extraModules: [() => [ledgerModule(marker)]],
  });
  const engine = restarted;
  // The replay answers the read from the journal and stops at the write: it may have happened.
  const parked = await until(
    () => (db as Db).actionRun.findUniqueOrThrow({ where: { id: run?.id } }),
    (r) => r.status === "waiting",
    20_000,
  );
  const card = await db.approval.findFirstOrThrow({ where: { runId: run?.id, kind: "uncertain" } });
  expect(parked?.waitingFor).toBe(card.id);
  expect(card).toMatchObject({ capability: "ledger.append", status: "pending" });
  expect(fs.existsSync(marker)).toBe(false);
  // The human says it had not happened: the write runs now, once.
  await engine.approvals.decide({
    approvalId: card.id,
    answer: "once",
    decidedBy: { userId, label: "Approver" },
  });
  const after = await until(
    () => (db as Db).actionRun.findUniqueOrThrow({ where: { id: run?.id } }),
    (r) => r.status === "ok",
    20_000,
  );
  const envelope = JSON.parse(after?.envelope ?? "{}") as {
    result?: unknown;
    calls?: { capability: string; replayed?: boolean }[];
  };
  expect(envelope.result).toEqual({ appended: true });
  expect(envelope.calls?.map((c) => [c.capability, c.replayed === true])).toEqual([
    ["ledger.peek", true],
    ["ledger.append", false],
  ]);
  expect(fs.readFileSync(marker, "utf8")).toBe("paid\n");
  expect(await db.approval.count({ where: { status: "pending" } })).toBe(0);
}, 120_000);
