/**
 * Durable actions (#31) in REAL server processes (./testing/durable-serve.ts: the real engine, MCP
 * handler, instance channel and the console's tRPC router), on SQLite (the killed process restarts
 * on the same address) and on PostgreSQL (two server processes A and B on one scratch database).
 * The action's capability module (`tally`) calls a local receiver that counts every impl run.
 *   - SIGKILL while an action waits for the approval of a write (after a read): restarted, or taken
 *     over by B, the run waits for the same request; a signed-in approver allows it over HTTP
 *     (tRPC `approvals.decide`, as the console does); the MCP task completes with the right result,
 *     the read ran once and the write exactly once.
 *   - The same, but the read's answer is too large to journal and changed by the replay: the
 *     replay takes another branch and fails with the divergence error; the write never runs.
 *   - PostgreSQL only, SIGSTOP of A for at least 10 s (a stalled owner): while its action waits for
 *     approval, and while it is inside the write's impl. B takes the run over; after SIGCONT, exactly
 *     one instance finished the run, the run row, its journal and its MCP task (or the direct call's
 *     answer) agree, and no side effect happened twice.
 * Heartbeats every second (an instance silent for 2.5 s is dead), so each case takes seconds, not
 * minutes; every wait is bounded generously and nothing asserts on timing.
 */
import fs from "node:fs";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ObservationEnvelope } from "../core/actions/envelope";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createApiKey } from "../services/api-keys";
import { hashPassword } from "../services/passwords";
import { consoleMutation, consoleSignIn } from "./testing/console-http";
import {
  freePort,
  kill9,
  mcpClient,
  postgresScratch,
  type Receiver,
  type ScratchDatabase,
  type ServedProcess,
  spawnServer,
  sqliteScratch,
  startReceiver,
  until,
} from "./testing/served-process";

const SERVE = "server/engine/testing/durable-serve.ts";
const HEARTBEAT_MS = 1_000;
/** Bounds that only keep a broken build from hanging; recovery takes a few beats. */
const SETTLE_MS = 45_000;
/** How long A stays stopped, at least. */
const PAUSE_MS = 10_000;
/** After SIGCONT: how long a stalled owner gets to write what it should not (an observation window). */
const STALE_WINDOW_MS = 5_000;
const APPROVER = { username: "bob", password: "bob-approves-1" };
const OPEN = ["working", "input_required"];
const pgBase = process.env.TOOLSTORE_TEST_POSTGRES_URL;

const backends: { label: string; pg: boolean; make: () => Promise<ScratchDatabase> }[] = [
  {
    label: "SQLite, restart on the same address",
    pg: false,
    make: async () => sqliteScratch("durable-served"),
  },
  ...(pgBase
    ? [
        {
          label: "PostgreSQL, two server processes",
          pg: true,
          make: () => postgresScratch(pgBase, "toolstore_durable_served"),
        },
      ]
    : []),
];

/** Reads, then writes what it read (the write asks a human). */
const readThenWrite = (trial: string) => `import { peek, record } from "toolstore/tally";
export default async function () {
  const seen = await peek({ trial: "${trial}" });
  const done = await record({ trial: "${trial}", line: "paid " + seen.n });
  return { seen: seen.n, done };
}`;

/** Takes another branch when the read's answer changed (the answer is too large to journal). */
const branchOnRead = (trial: string) => `import { peek, record } from "toolstore/tally";
export default async function () {
  const seen = await peek({ trial: "${trial}" });
  if (seen.n === 1) return await record({ trial: "${trial}", line: "first look" });
  return await peek({ trial: "${trial}-other" });
}`;

/** Whether a process is stopped (Linux: state T in /proc/<pid>/stat). */
function stopped(pid: number): boolean {
  try {
    return /^\d+ \(.*\) T/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const debug = (...args: unknown[]) => {
  if (process.env.DURABLE_DEBUG) console.error(new Date().toISOString().slice(11, 23), ...args);
};

for (const backend of backends) {
  describe.sequential(`durable actions in real server processes (${backend.label})`, () => {
    let scratch: ScratchDatabase;
    let db: Db;
    let receiver: Receiver;
    let apiKey = "";
    const answers = new Map<string, (url: URL) => { hold: boolean; body?: string }>();
    const servers: ServedProcess[] = [];
    const clients: Client[] = [];
    const cookies = new Map<string, string>();

    beforeAll(async () => {
      scratch = await backend.make();
      await deployMigrations(scratch.target);
      db = createDb(scratch.target);
      const alice = await db.user.create({
        data: { username: "alice", displayName: "Alice", role: "admin", passwordHash: "x" },
      });
      await db.user.create({
        data: {
          username: APPROVER.username,
          displayName: "Bob",
          role: "approver",
          passwordHash: await hashPassword(APPROVER.password),
        },
      });
      apiKey = (await createApiKey(db, alice.id, { name: "agent", mode: "default", modules: ["*"] })).key;
      receiver = await startReceiver();
      receiver.onHit = (trial, url) => answers.get(trial)?.(url) ?? { hold: false };
    }, 60_000);

    afterEach(async () => {
      for (const c of clients.splice(0)) await c.close().catch(() => undefined);
      for (const s of servers.splice(0)) {
        if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGCONT");
        await kill9(s.child);
      }
      receiver.release();
      answers.clear();
    });

    afterAll(async () => {
      await receiver?.close();
      await db?.$disconnect();
      await scratch?.drop();
    });

    async function serve(port: number, parkAfterMs: number): Promise<ServedProcess> {
      const server = await spawnServer(
        scratch.url,
        port,
        {
          TOOLSTORE_HEARTBEAT_MS: String(HEARTBEAT_MS),
          TOOLSTORE_PARK_AFTER_MS: String(parkAfterMs),
          TOOLSTORE_ACTION_TIMEOUT_MS: "120000",
          TOOLSTORE_APPROVAL_TTL_MINUTES: "10",
          TALLY_RECEIVER_URL: receiver.url,
        },
        SERVE,
      );
      servers.push(server);
      const tag = `${server.instanceId.slice(-6)}:${port}`;
      server.child.stderr?.on("data", (d) => debug(tag, String(d).trim()));
      return server;
    }

    /** The approver's answer through the console's HTTP path, on `server`. */
    async function decide(server: ServedProcess, approvalId: string, answer: "once" | "deny") {
      const origin = new URL(server.url).origin;
      let cookie = cookies.get("bob");
      if (!cookie) {
        cookie = await consoleSignIn(origin, APPROVER.username, APPROVER.password);
        cookies.set("bob", cookie);
      }
      return consoleMutation<{ id: string; status: string }>(origin, cookie, "approvals.decide", {
        approvalId,
        answer,
      });
    }

    async function client(server: ServedProcess, name: string): Promise<Client> {
      const c = await mcpClient(server.url, apiKey, name);
      clients.push(c);
      return c;
    }

    async function startTask(server: ServedProcess, code: string, title: string): Promise<string> {
      const c = await client(server, "durable-agent");
      const created = await c.request(
        {
          method: "tools/call",
          params: { name: "execute_code", arguments: { code, title }, task: { ttl: 600_000 } },
        },
        CreateTaskResultSchema,
      );
      return created.task.taskId;
    }

    /** The task's end and result, read in a new MCP session on `server`. */
    async function taskEnd(server: ServedProcess, taskId: string) {
      const reader = await client(server, "durable-agent-again");
      const task = await until(
        () => reader.experimental.tasks.getTask(taskId),
        (t) => !OPEN.includes(t.status),
        SETTLE_MS,
      );
      const result =
        task.status === "completed"
          ? await reader.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)
          : null;
      return { task, result };
    }

    const hits = (trial: string, op: "peek" | "record") => receiver.hits.get(`${trial}:${op}`) ?? 0;
    const runOf = (title: string) =>
      until(
        () => db.actionRun.findFirst({ where: { title } }),
        (r) => r !== null,
        SETTLE_MS,
      );
    const runRow = (id: string) => db.actionRun.findUniqueOrThrow({ where: { id } });
    const pendingOf = (runId: string, kind = "call") =>
      until(
        () => db.approval.findFirst({ where: { runId, kind, status: "pending" } }),
        (a) => a !== null,
        SETTLE_MS,
      );
    /** The run.finished events of a run: one per instance that finished it. */
    const finishes = async (runId: string) =>
      (await db.event.findMany({ where: { type: "run.finished" }, orderBy: { seq: "asc" } }))
        .map((e) => JSON.parse(e.payload) as { runId: string; ok: boolean })
        .filter((p) => p.runId === runId);
    /**
     * The finishes once the run's row says it ended: a replay's run.finished is published after its
     * fenced row is written (a stalled owner announces nothing), so it may land a moment later.
     */
    const finishesOfEnded = (runId: string) =>
      until(
        () => finishes(runId),
        (f) => f.length > 0,
        SETTLE_MS,
      );
    /** What no run may leave behind: a request still open, or an allow nobody used. */
    const leftOpen = (runId: string) =>
      db.approval.count({
        where: { runId, OR: [{ status: "pending" }, { status: "allowed", consumedAt: null }] },
      });
    const envelopeOf = (row: { envelope: string | null }) =>
      JSON.parse(row.envelope ?? "null") as ObservationEnvelope | null;

    /**
     * Kills the instance running the action while the write waits (parked) on its approval; the
     * live instance is the restarted process (SQLite) or B (PostgreSQL). Allows the write there
     * through the console and returns the run id, that instance and the task as it ended.
     */
    async function killWhileWaiting(title: string, code: string) {
      const port = await freePort();
      const a = await serve(port, 500);
      const b = backend.pg ? await serve(await freePort(), 500) : undefined;
      const taskId = await startTask(a, code, title);
      const run = await runOf(title);
      const runId = run?.id ?? "";
      const approval = await pendingOf(runId);
      expect(approval?.capability).toBe("tally.record");
      const parked = await until(
        () => runRow(runId),
        (r) => r.status === "waiting",
        SETTLE_MS,
      );
      expect(parked.waitingFor).toBe(approval?.id);

      await kill9(a.child);
      const live = b ?? (await serve(port, 500));
      // Restarted or taken over, the run still waits for the same request, which is still open.
      const after = await until(
        () => runRow(runId),
        (r) => r.status === "waiting",
        SETTLE_MS,
      );
      expect(after.waitingFor).toBe(approval?.id);
      expect((await db.approval.findUniqueOrThrow({ where: { id: approval?.id ?? "" } })).status).toBe(
        "pending",
      );
      const decided = await decide(live, approval?.id ?? "", "once");
      expect(decided.status).toBe("allowed");
      const end = await taskEnd(live, taskId);
      return { runId, live, ...end };
    }

    it("[DURABLE]: SIGKILL while a write waits for approval; allowed from the console, the task completes, the read ran once, the write once", async () => {
      const trial = `pay-${Date.now().toString(36)}`;
      answers.set(`${trial}:peek`, () => ({ hold: false, body: JSON.stringify({ n: 7 }) }));
      answers.set(`${trial}:record`, () => ({ hold: false, body: "ok" }));
      const { runId, live, task, result } = await killWhileWaiting(trial, readThenWrite(trial));

      expect(task.status).toBe("completed");
      expect(result?.isError).toBe(false);
      expect(result?.structuredContent).toMatchObject({
        ok: true,
        result: { seen: 7, done: { recorded: "paid 7", reply: "ok" } },
        calls: [
          { capability: "tally.peek", decision: "allow", replayed: true },
          { capability: "tally.record", decision: "allow" },
        ],
      });
      expect(hits(trial, "peek")).toBe(1);
      expect(hits(trial, "record")).toBe(1);
      const row = await runRow(runId);
      expect(row).toMatchObject({ status: "ok", instanceId: live.instanceId });
      expect(envelopeOf(row)).toEqual(result?.structuredContent);
      expect(await finishesOfEnded(runId)).toEqual([expect.objectContaining({ ok: true })]);
      expect(await leftOpen(runId)).toBe(0);
    }, 180_000);

    it("[DURABLE]: a replay whose read answers differently takes another branch and fails with the divergence error; the write never runs", async () => {
      const trial = `fork-${Date.now().toString(36)}`;
      // Over the journal's 1 MiB: the read's answer is not kept, so the replay reads again.
      const pad = "x".repeat(1_100_000);
      answers.set(`${trial}:peek`, () => ({
        hold: false,
        body: JSON.stringify({ n: hits(trial, "peek"), pad }),
      }));
      const { runId, task, result } = await killWhileWaiting(trial, branchOnRead(trial));

      expect(task.status).toBe("completed");
      expect(result?.isError).toBe(true);
      const envelope = result?.structuredContent as unknown as ObservationEnvelope;
      expect(envelope.error?.kind).toBe("diverged");
      expect(envelope.error?.message).toMatch(
        /^the action changed course at call 2: expected tally\.record with arguments #[0-9a-f]{12}, got tally\.peek with arguments #[0-9a-f]{12}/,
      );
      // The read ran again (reads may; that is how it answered differently); nothing else ran.
      expect(hits(trial, "peek")).toBe(2);
      expect(hits(trial, "record")).toBe(0);
      expect(hits(`${trial}-other`, "peek")).toBe(0);
      const row = await runRow(runId);
      expect(row).toMatchObject({ status: "error", errorKind: "diverged" });
      expect(envelopeOf(row)).toEqual(envelope);
      expect(await finishesOfEnded(runId)).toEqual([expect.objectContaining({ ok: false })]);
      // The allow the replay never reached is closed by the sweep, not left usable.
      const open = await until(
        () => leftOpen(runId),
        (n) => n === 0,
        SETTLE_MS,
      );
      expect(open).toBe(0);
    }, 180_000);

    if (!backend.pg) return;

    /** A and B with a long hot window: A holds its sandbox (the run `running`) while it waits. */
    async function pair() {
      const a = await serve(await freePort(), 60_000);
      const b = await serve(await freePort(), 60_000);
      return { a, b, pid: a.child.pid ?? 0 };
    }

    /** What a stalled owner could wrongly change: the run's finishes, its row, its journal. */
    const traces = async (runId: string) =>
      JSON.stringify([
        await finishes(runId),
        await runRow(runId),
        await db.gateDecisionRecord.findMany({ where: { runId }, orderBy: { seq: "asc" } }),
      ]);

    /** SIGCONT for A; once A beats again, it gets a window to do what a stalled owner must not. */
    async function resume(pid: number, aInstance: string, runId: string) {
      const beat = async () =>
        (await db.setting.findUnique({ where: { key: `instance:${aInstance}` } }))?.value ?? "";
      const stalledBeat = await beat();
      debug("before SIGCONT", await traces(runId));
      process.kill(pid, "SIGCONT");
      await until(beat, (v) => v !== stalledBeat, SETTLE_MS);
      await sleep(STALE_WINDOW_MS);
      debug("after SIGCONT", await traces(runId));
    }

    it("[DURABLE]: PostgreSQL, A stopped (SIGSTOP) while its action waits for approval: B takes over, exactly one finishes, the task agrees, the write ran once", async () => {
      const trial = `stall-${Date.now().toString(36)}`;
      answers.set(`${trial}:peek`, () => ({ hold: false, body: JSON.stringify({ n: 3 }) }));
      answers.set(`${trial}:record`, () => ({ hold: false, body: "ok" }));
      const { a, b, pid } = await pair();
      const taskId = await startTask(a, readThenWrite(trial), trial);
      const runId = (await runOf(trial))?.id ?? "";
      const approval = await pendingOf(runId);
      // A waits: its journal says so (the row a replay resumes from), its sandbox is held.
      const waiting = await until(
        () => db.gateDecisionRecord.findFirst({ where: { runId, seq: 2 } }),
        (r) => r?.state === "waiting",
        SETTLE_MS,
      );
      expect(waiting).toMatchObject({ capability: "tally.record", approvalId: approval?.id });
      expect((await runRow(runId)).status).toBe("running");

      process.kill(pid, "SIGSTOP");
      const stoppedAt = Date.now();
      expect(await until(async () => stopped(pid), Boolean, SETTLE_MS)).toBe(true);
      // A's heartbeat stalls: B takes the run over and replays it up to the same request.
      const taken = await until(
        () => runRow(runId),
        (r) => r.instanceId === b.instanceId,
        SETTLE_MS,
      );
      expect(taken).toMatchObject({ status: "running", instanceId: b.instanceId });
      expect(stopped(pid)).toBe(true);
      await decide(b, approval?.id ?? "", "once");
      const done = await until(
        () => runRow(runId),
        (r) => r.status === "ok",
        SETTLE_MS,
      );
      expect(done.status).toBe("ok");
      await sleep(Math.max(0, PAUSE_MS - (Date.now() - stoppedAt)));
      expect(stopped(pid)).toBe(true);
      await resume(pid, a.instanceId, runId);

      const row = await runRow(runId);
      expect.soft(row).toMatchObject({ status: "ok", instanceId: b.instanceId });
      expect.soft(envelopeOf(row)?.result).toEqual({ seen: 3, done: { recorded: "paid 3", reply: "ok" } });
      expect.soft(await finishesOfEnded(runId)).toEqual([expect.objectContaining({ ok: true })]);
      // The journal still says what happened: the write was allowed and ran.
      const write = await db.gateDecisionRecord.findFirst({ where: { runId, seq: 2 } });
      expect.soft(write).toMatchObject({ capability: "tally.record", decision: "allow", state: "ok" });
      const denials = await db.auditEntry.count({
        where: { action: "gate.deny", detail: { contains: runId } },
      });
      expect.soft(denials).toBe(0);
      expect.soft(hits(trial, "peek")).toBe(1);
      expect.soft(hits(trial, "record")).toBe(1);
      expect.soft(await leftOpen(runId)).toBe(0);
      // The task, read on either instance, says what the run row says.
      for (const server of [a, b]) {
        const { task, result } = await taskEnd(server, taskId);
        expect.soft(task.status).toBe("completed");
        expect.soft(result?.structuredContent).toEqual(envelopeOf(row));
      }
    }, 180_000);

    it("[DURABLE]: PostgreSQL, A stopped (SIGSTOP) inside the write's impl: B asks whether it happened, exactly one finishes, the client's answer agrees, the write ran once", async () => {
      const trial = `inside-${Date.now().toString(36)}`;
      const { a, b, pid } = await pair();
      answers.set(`${trial}:peek`, () => ({ hold: false, body: JSON.stringify({ n: 5 }) }));
      // The write's effect reaches the receiver; A is stopped before it hears the answer.
      let stoppedAt = 0;
      answers.set(`${trial}:record`, () => {
        process.kill(pid, "SIGSTOP");
        stoppedAt = Date.now();
        return { hold: true };
      });
      const agent = await client(a, "durable-agent");
      const answer = agent.callTool(
        { name: "execute_code", arguments: { code: readThenWrite(trial), title: trial } },
        undefined,
        { timeout: 180_000 },
      );
      answer.catch(() => undefined);
      const runId = (await runOf(trial))?.id ?? "";
      const approval = await pendingOf(runId);
      await decide(b, approval?.id ?? "", "once");
      expect(await until(async () => stopped(pid), Boolean, SETTLE_MS)).toBe(true);
      expect(hits(trial, "record")).toBe(1);
      expect(receiver.release()).toBe(1);

      // B takes the run over; the write's outcome was never recorded, so B asks a human.
      const taken = await until(
        () => runRow(runId),
        (r) => r.instanceId === b.instanceId,
        SETTLE_MS,
      );
      expect(taken.instanceId).toBe(b.instanceId);
      const card = await pendingOf(runId, "uncertain");
      expect(card?.capability).toBe("tally.record");
      expect(stopped(pid)).toBe(true);
      await sleep(Math.max(0, PAUSE_MS - (Date.now() - stoppedAt)));
      expect(stopped(pid)).toBe(true);
      await resume(pid, a.instanceId, runId);
      // A's attempt lost the run: it finished nothing, and the run still waits on B.
      expect.soft(await finishes(runId)).toEqual([]);
      expect.soft(await runRow(runId)).toMatchObject({ status: "running", instanceId: b.instanceId });

      // The human knows it happened (the receiver got it): they end the action instead of repeating it.
      await decide(b, card?.id ?? "", "deny");
      const row = await until(
        () => runRow(runId),
        (r) => r.status !== "running" && r.status !== "waiting",
        SETTLE_MS,
      );
      expect(row).toMatchObject({ status: "error", errorKind: "ended", instanceId: b.instanceId });
      const envelope = envelopeOf(row);
      expect.soft(envelope?.error?.message).toContain("call 2 (tally.record) may already have happened");
      expect.soft(await finishesOfEnded(runId)).toEqual([expect.objectContaining({ ok: false })]);
      // The client that asked A gets the run's one outcome.
      const answered = await answer;
      expect.soft(answered.structuredContent).toEqual(envelope);
      // Its journal row says the write was allowed and may have happened, or that it ran.
      const write = await db.gateDecisionRecord.findFirst({ where: { runId, seq: 2 } });
      expect.soft(write).toMatchObject({ capability: "tally.record", decision: "allow" });
      expect.soft(["started", "ok"]).toContain(write?.state);
      expect.soft(hits(trial, "peek")).toBe(1);
      expect.soft(hits(trial, "record")).toBe(1);
      expect.soft(await leftOpen(runId)).toBe(0);
    }, 180_000);
  });
}
