/**
 * What the console shows of a durable run, from a real one: a server process is killed with
 * SIGKILL inside a write's impl (server/engine/testing/kill-child.ts), a restarted engine replays
 * the run and parks it on an `uncertain` approval. The approval queue and its card say the kind,
 * the notification says it is a call that may already have happened, the run view says the run
 * is parked on that approval and how often it was replayed, and after "don't run it again" the
 * call its last replay answered from the journal is marked so.
 */
import { fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { type ServerEngine, startServerEngine } from "../engine/index";
import { ledgerModule } from "../engine/testing/ledger-module";
import { until } from "../engine/testing/served-process";
import { createEventBus, type EventBus } from "../infra/events";
import { getApprovalCard, listApprovalQueue } from "./approval-queue";
import { buildMessage } from "./notifications/message";
import { type RunWatchItem, watchRun } from "./run-watch";
import { getRunDetail, listRuns, parseRunFilters } from "./runs";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-durable-views-"));
const dbFile = path.join(dir, "views.db");
const marker = path.join(dir, "ledger.txt");
let db: Db;
let bus: EventBus;
let engine: ServerEngine | undefined;
let userId: string;
let runId: string;

beforeAll(async () => {
  await deployMigrations({ provider: "sqlite", url: dbFile });
  db = createDb({ provider: "sqlite", url: dbFile });
  bus = createEventBus(db, { pollMs: 20 });
  userId = (
    await db.user.create({
      data: { username: "approver", displayName: "Approver", role: "admin", passwordHash: "x" },
    })
  ).id;

  // A server that dies inside ledger.append's impl, after the call was approved and started.
  const child = fork(
    path.join(import.meta.dirname, "../engine/testing/kill-child.ts"),
    [dbFile, marker, userId],
    {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.on("message", (m: { t?: string }) => {
      if (m.t === "impl-entered") resolve();
    });
    child.once("exit", (code) => reject(new Error(`the server exited (code ${code}) before the impl ran`)));
  });
  child.kill("SIGKILL");
  await exited;
  // Its heartbeat made stale, so the restarted engine takes the run over at once.
  await db.setting.update({
    where: { key: "instance:doomed" },
    data: { value: new Date(Date.now() - 10 * 60_000).toISOString() },
  });
  engine = await startServerEngine({
    db,
    instanceId: "after-restart",
    workers: 1,
    extraModules: [() => [ledgerModule(marker)]],
  });
  const parked = await until(
    () => db.actionRun.findFirst({ select: { id: true, status: true } }),
    (r) => r?.status === "waiting",
    20_000,
  );
  expect(parked?.status).toBe("waiting");
  runId = parked?.id ?? "";
}, 120_000);

afterAll(async () => {
  await engine?.shutdown();
  bus?.close();
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

it("[DURABLE]: the queue, the card and the notification say the call may already have happened", async () => {
  const queue = await listApprovalQueue(db);
  const pending = queue.pending.filter((p) => p.runId === runId);
  expect(pending).toHaveLength(1);
  const card = pending[0];
  expect(card).toMatchObject({
    capability: "ledger.append",
    kind: "uncertain",
    status: "pending",
    // Running it again is a yes or no for this one call: no session grant.
    sessionGrantable: false,
  });
  // The approval the first attempt was allowed with is in the history as an ordinary call.
  expect(queue.history.filter((h) => h.runId === runId).map((h) => [h.kind, h.status])).toEqual([
    ["call", "allowed"],
  ]);
  expect((await getApprovalCard(db, card?.id ?? ""))?.kind).toBe("uncertain");

  const row = await db.approval.findUniqueOrThrow({ where: { id: card?.id ?? "" } });
  const message = buildMessage({
    kind: "request",
    rows: [{ row, requester: { keyName: null, clientName: null, ownerName: null } }],
    publicUrl: "http://toolstore.test",
    now: Date.now(),
  });
  expect(message.title).toBe("Run again? ledger.append");
  expect(message.body).toContain("ledger.append may already have run: run it again, or end the action?");
  expect(message.url).toBe(`http://toolstore.test/approvals/${card?.id}`);
});

it("[DURABLE]: a parked run says what it waits for, is listed as waiting and stays watched", async () => {
  const detail = await getRunDetail(db, runId);
  const cardId = (await db.approval.findFirstOrThrow({ where: { runId, kind: "uncertain" } })).id;
  expect(detail.status).toBe("waiting");
  expect(detail.replays).toBe(1);
  expect(detail.parked).toMatchObject({ approvalId: cardId, capability: "ledger.append", kind: "uncertain" });
  expect(Number.isNaN(Date.parse(detail.parked?.since ?? ""))).toBe(false);
  // One row per call: the read, and the write waiting for the human (not "expired", not "denied").
  expect(detail.timeline.map((r) => [r.capability, r.state, r.approval?.kind ?? null])).toEqual([
    ["ledger.peek", "allow", null],
    ["ledger.append", "waiting", "uncertain"],
  ]);
  expect(detail.timeline[1]?.approvalId).toBe(cardId);
  expect(detail.timeline[1]?.reason).toContain("may already have happened");

  const listed = await listRuns(db, parseRunFilters({ status: "waiting" }));
  expect(listed.runs.map((r) => r.id)).toEqual([runId]);

  // The run page follows a parked run live: the watch does not end while it waits.
  const items: RunWatchItem[] = [];
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 400);
  for await (const item of watchRun(db, { runId, afterSeq: 0, signal: ac.signal, bus })) items.push(item);
  clearTimeout(timer);
  expect(items.filter((i) => i.kind === "finished")).toEqual([]);
});

it("[DURABLE]: after 'don't run it again' the run view marks the call answered from the journal", async () => {
  const card = await db.approval.findFirstOrThrow({ where: { runId, kind: "uncertain" } });
  await engine?.approvals.decide({
    approvalId: card.id,
    answer: "deny",
    decidedBy: { userId, label: "Approver" },
  });
  const ended = await until(
    () => db.actionRun.findUniqueOrThrow({ where: { id: runId }, select: { status: true } }),
    (r) => r.status === "error",
    20_000,
  );
  expect(ended.status).toBe("error");
  expect(fs.existsSync(marker)).toBe(false);

  const detail = await getRunDetail(db, runId);
  expect(detail.envelope?.error?.kind).toBe("ended");
  // The run page's status pill shows the error kind.
  expect(detail.errorKind).toBe("ended");
  // Replayed after the restart, and again after the answer.
  expect(detail.replays).toBe(2);
  expect(detail.parked).toBeNull();
  expect(
    detail.timeline.map((r) => [r.capability, r.state, r.replayed === true, r.approval?.status ?? null]),
  ).toEqual([
    ["ledger.peek", "allow", true, null],
    ["ledger.append", "deny", false, "denied"],
  ]);
  expect(detail.timeline[1]?.approval).toMatchObject({ kind: "uncertain", decidedBy: "Approver" });

  const history = (await listApprovalQueue(db)).history.filter((h) => h.runId === runId);
  expect(history.map((h) => [h.kind, h.status]).sort()).toEqual([
    ["call", "allowed"],
    ["uncertain", "denied"],
  ]);
});
