/**
 * The fault suite: kill -9 of a REAL server process (scripts/fault-serve.ts: the real
 * engine and MCP handler) at four points of an approval's life, on SQLite (the process restarts
 * on the same address) and on PostgreSQL with two instances (this test process is instance B,
 * which approves and, after the liveness timeout, takes the run over). The action's side effect
 * is a POST to a local receiver that counts hits. Actions are durable: after each kill the run is
 * resumed by replay, never left running: a kill while it waits leaves it waiting (the approval
 * still pending) and allowing it then completes it; an allowed call not yet run runs once; a kill
 * inside the impl leaves an "uncertain" card, and ending the action there runs nothing again.
 * Never a duplicate side effect, the final state readable over MCP (toolstore://runs/<id>), and
 * on SQLite `integrity_check` ok. FAULT_TRIALS=10 runs ten
 * trials per point (the local run the issue asks for); CI runs one. Each trial's leftovers are
 * recorded before they are asserted, and a table of the counts per point is printed at the end.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createInstanceChannel, type InstanceChannel } from "../infra/instance-channel";
import { createMcpHttpHandler } from "../mcp/http";
import { createMcpBackend } from "../mcp/mcp-backend";
import { serveFetchHandler } from "../mcp/node-adapter";
import { createApiKey } from "../services/api-keys";
import { type ServerEngine, startServerEngine } from "./index";
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

const TRIALS = Number(process.env.FAULT_TRIALS ?? "1");
const HEARTBEAT_MS = 1_000;
/** Liveness timeout (2.5 beats) plus a sweep and slack. */
const SETTLE_MS = 10_000;
const POINTS = ["pending", "after-allow", "during-impl", "after-impl"] as const;
type Point = (typeof POINTS)[number];
const pgBase = process.env.TOOLSTORE_TEST_POSTGRES_URL;
const debug = (...args: unknown[]) => {
  if (process.env.FAULT_DEBUG) console.error(new Date().toISOString().slice(11, 23), ...args);
};
const SERVER_ENV = {
  TOOLSTORE_HEARTBEAT_MS: String(HEARTBEAT_MS),
  TOOLSTORE_APPROVAL_TTL_MINUTES: "1",
};

/** What one trial left behind, read before anything is asserted (so a failing trial is counted too). */
interface Observation {
  hits: number;
  approvalStatus: string;
  approvalsPending: number;
  allowedUnconsumed: number;
  runStatus: string;
  /** SQLite `PRAGMA integrity_check`; null on PostgreSQL. */
  integrity: string | null;
  /** From the kill to the run's final row (by the restarted process, or by the other instance). */
  finalizeMs: number;
}

function summaryTable(backend: string, stats: Map<Point, Observation[]>, finalizer: string): string {
  const head = [
    "point",
    "trials",
    "duplicates",
    "pending left",
    "allowed-unconsumed",
    "running left",
    "integrity ok",
    `finalize p50/max ms (${finalizer})`,
    "approval ended",
  ];
  const rows = [...stats].map(([point, obs]) => {
    const ms = obs.map((o) => o.finalizeMs).sort((x, y) => x - y);
    const ended = new Map<string, number>();
    for (const o of obs) ended.set(o.approvalStatus, (ended.get(o.approvalStatus) ?? 0) + 1);
    return [
      point,
      String(obs.length),
      String(obs.filter((o) => o.hits > 1).length),
      String(obs.reduce((n, o) => n + o.approvalsPending, 0)),
      String(obs.reduce((n, o) => n + o.allowedUnconsumed, 0)),
      String(obs.filter((o) => o.runStatus === "running").length),
      obs[0]?.integrity === null ? "n/a" : `${obs.filter((o) => o.integrity === "ok").length}/${obs.length}`,
      ms.length ? `${ms[Math.floor((ms.length - 1) / 2)]}/${ms[ms.length - 1]}` : "-",
      [...ended].map(([k, n]) => `${k} ${n}`).join(", "),
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [
    `fault suite on ${backend}:`,
    line(head),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.map(line),
  ].join("\n");
}

const actionFor = (receiverUrl: string, trial: string) => `import { fetch } from "toolstore/http";
export default async function () {
  const r = await fetch({ url: "${receiverUrl}/hit?trial=${trial}", method: "POST", body: "x" });
  const t = Date.now();
  while (Date.now() - t < 1500) {}
  return r.status;
}`;

/** Resolves once every thread of `pid` is stopped (state T in /proc), or after 2 s. */
async function untilStopped(pid: number): Promise<void> {
  const stopped = () =>
    fs.readdirSync(`/proc/${pid}/task`).every((tid) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        return /^[Tt]/.test(stat.slice(stat.lastIndexOf(")") + 2));
      } catch {
        return true; // the thread ended
      }
    });
  const deadline = Date.now() + 2_000;
  while (!stopped() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
}

/**
 * SIGSTOPs the server at a moment it holds no SQLite write lock. Stopped inside a write
 * transaction (its heartbeat beats every second), it would keep that lock for as long as it stays
 * stopped, and B's decision would wait out the busy timeout and fail (it did once in CI:
 * SQLITE_BUSY, then every later point hit the stopped server). A probe connection that takes the
 * write lock and gives it back at once proves the stopped server holds none; if it does, the
 * server runs on for a moment and is stopped again. The probe waits until every thread of the
 * server is stopped: kill() only sends the signal, and a server that took the lock between a
 * probe and its stop held it through B's decision (CI: "Operation has timed out", the busy
 * timeout, in B's updateMany). PostgreSQL's decision touches no row the server writes while a
 * run waits, so there it is stopped as it is.
 */
async function stopBetweenWrites(pid: number, target: ScratchDatabase["target"]): Promise<void> {
  if (target.provider !== "sqlite") {
    process.kill(pid, "SIGSTOP");
    return;
  }
  const probe = new Database(target.url, { timeout: 0 });
  try {
    for (let tries = 0; ; tries++) {
      process.kill(pid, "SIGSTOP");
      await untilStopped(pid);
      try {
        probe.exec("BEGIN IMMEDIATE");
        probe.exec("ROLLBACK");
        debug("stopped between writes after", tries, "retries");
        return;
      } catch (e) {
        if ((e as { code?: string }).code !== "SQLITE_BUSY" || tries >= 200) throw e;
      }
      process.kill(pid, "SIGCONT");
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    probe.close();
  }
}

interface Setup {
  name: string;
  scratch: ScratchDatabase;
  /** SQLite: the killed process comes back on the same address; PostgreSQL: B finalizes alone. */
  restart: boolean;
}

async function sqliteSetup(): Promise<Setup> {
  return {
    name: "SQLite (restart on the same address)",
    scratch: sqliteScratch("toolstore-fault"),
    restart: true,
  };
}

async function pgSetup(): Promise<Setup> {
  return {
    name: "PostgreSQL (two instances)",
    scratch: await postgresScratch(pgBase ?? "", "toolstore_fault"),
    restart: false,
  };
}

for (const makeSetup of [sqliteSetup, ...(pgBase ? [pgSetup] : [])]) {
  describe.sequential(`fault suite: kill -9 of a real server`, () => {
    let setup: Setup;
    let db: Db;
    let b: ServerEngine;
    let channel: InstanceChannel;
    let bMcp: { url: string; close(): Promise<void> };
    let receiver: Receiver;
    let apiKey: string;
    let userId: string;
    let port: number;
    let a: ServedProcess | undefined;
    const stats = new Map<Point, Observation[]>();

    beforeAll(async () => {
      setup = await makeSetup();
      await deployMigrations(setup.scratch.target);
      db = createDb(setup.scratch.target);
      channel = createInstanceChannel(setup.scratch.target);
      await channel.ready();
      userId = (
        await db.user.create({
          data: { username: "alice", displayName: "A", role: "admin", passwordHash: "x" },
        })
      ).id;
      apiKey = (await createApiKey(db, userId, { name: "agent", mode: "default", modules: ["*"] })).key;
      b = await startServerEngine({
        db,
        channel,
        workers: 1,
        instanceId: "instance-b",
        heartbeatMs: HEARTBEAT_MS,
        httpAllowedHosts: ["127.0.0.1"],
      });
      bMcp = await serveFetchHandler(
        createMcpHttpHandler({
          db,
          backend: createMcpBackend({ db, engine: async () => b, publicUrl: "http://b.test" }),
          consoleUrl: "http://b.test",
          allowedOrigins: [],
          rateLimitPerMinute: 100_000,
        }),
      );
      receiver = await startReceiver();
      port = await freePort();
    }, 60_000);

    afterAll(async () => {
      if (a) await kill9(a.child);
      await receiver?.close();
      await bMcp?.close();
      await b?.shutdown();
      await channel?.close();
      await db?.$disconnect();
      await setup?.scratch.drop();
      if (setup) console.log(summaryTable(setup.name, stats, setup.restart ? "restarted A or B" : "on B"));
    });

    async function trial(point: Point): Promise<void> {
      a ??= await spawnServer(setup.scratch.url, port, SERVER_ENV);
      const server = a;
      const id = randomUUID().slice(0, 8);
      let runId: string | undefined;
      const killed = new Promise<void>((resolve, reject) => {
        receiver.onHit = (t) => {
          if (t !== id) return { hold: false };
          if (point === "during-impl") {
            void kill9(server.child).then(resolve);
            return { hold: true };
          }
          if (point === "after-impl") setTimeout(() => void kill9(server.child).then(resolve), 300);
          return { hold: false };
        };
        if (point === "pending" || point === "after-allow") {
          void (async () => {
            const approval = await until(
              () => db.approval.findFirst({ where: { status: "pending", argsSnapshot: { contains: id } } }),
              (r) => r !== null,
              90_000,
            );
            if (point === "after-allow" && approval) {
              // Allowed, and A never acted on it: A is paused before the decision and killed after,
              // so the decision cannot reach A's hot waiter first (then A would run the write, and
              // a kill between its journal's "started" and the receiver would leave an uncertain
              // card instead: the during-impl point, not this one).
              if (server.child.pid) await stopBetweenWrites(server.child.pid, setup.scratch.target);
              await b.approvals.decide({
                approvalId: approval.id,
                answer: "once",
                decidedBy: { userId, label: "alice" },
              });
            }
            await kill9(server.child);
            resolve();
          })().catch(reject);
        } else {
          // The impl only runs once someone allows the call: B approves as soon as it is asked.
          void (async () => {
            const approval = await until(
              () => db.approval.findFirst({ where: { status: "pending", argsSnapshot: { contains: id } } }),
              (r) => r !== null,
              90_000,
            );
            if (approval) {
              await b.approvals.decide({
                approvalId: approval.id,
                answer: "once",
                decidedBy: { userId, label: "alice" },
              });
            }
          })().catch(reject);
        }
      });
      debug(point, id, "calling");
      const client = await mcpClient(server.url, apiKey, "fault-suite");
      const call = client
        .callTool({ name: "execute_code", arguments: { code: actionFor(receiver.url, id) } }, undefined, {
          timeout: 60_000,
          onprogress: (p) => {
            runId ??= /Run (\S+) started/.exec(p.message ?? "")?.[1];
          },
        })
        .then(
          () => "answered",
          () => "failed",
        );
      await killed;
      debug(point, id, "killed");
      a = undefined;
      // The client of a killed server never gets its answer (its transport would retry the
      // stream until the request timeout; closing it ends the call at once).
      await client.close().catch(() => undefined);
      expect(await call).toBe("failed");
      const started = Date.now();
      if (setup.restart) a = await spawnServer(setup.scratch.url, port, SERVER_ENV);
      debug(point, id, "restarted");

      const findRun = () => db.actionRun.findFirst({ where: { code: { contains: id } } });
      // Taken over and replayed: it waits for a human again, or it finished.
      let run = await until(findRun, (r) => r !== null && r.status !== "running", SETTLE_MS);
      const finalizeMs = Date.now() - started;
      runId ??= run?.id;
      expect(run?.id).toBe(runId);
      if (!setup.restart) expect(finalizeMs).toBeLessThan(SETTLE_MS);
      const waitingOn = run?.status === "waiting" ? run.waitingFor : null;
      const card = waitingOn ? await db.approval.findUnique({ where: { id: waitingOn } }) : null;
      if (point === "pending") {
        // Nothing had happened: the run waits for the same request, which is still open.
        expect(run?.status).toBe("waiting");
        expect(card).toMatchObject({ kind: "call", status: "pending" });
        expect(receiver.hits.get(id) ?? 0).toBe(0);
        await b.approvals.decide({
          approvalId: card?.id ?? "",
          answer: "once",
          decidedBy: { userId, label: "alice" },
        });
      }
      if (point === "during-impl") {
        // It may have happened: a human decides; here they end the action.
        expect(run?.status).toBe("waiting");
        expect(card).toMatchObject({ kind: "uncertain", status: "pending" });
      }
      if (card?.kind === "uncertain") {
        await b.approvals.decide({
          approvalId: card.id,
          answer: "deny",
          decidedBy: { userId, label: "alice" },
        });
      }
      run = await until(
        findRun,
        (r) => r !== null && ["ok", "error", "interrupted"].includes(r.status),
        SETTLE_MS * 2,
      );
      const hits = receiver.hits.get(id) ?? 0;
      const approvals = await db.approval.findMany({
        where: { runId: run?.id ?? "" },
        orderBy: { createdAt: "asc" },
      });
      const integrity =
        setup.scratch.target.provider === "sqlite"
          ? ((await db.$queryRawUnsafe<{ integrity_check: string }[]>("PRAGMA integrity_check"))[0]
              ?.integrity_check ?? "none")
          : null;
      const observed: Observation = {
        hits,
        approvalStatus:
          approvals.map((x) => `${x.kind === "uncertain" ? "uncertain " : ""}${x.status}`).join("+") ||
          "none",
        approvalsPending: approvals.filter((x) => x.status === "pending").length,
        allowedUnconsumed: approvals.filter((x) => x.status === "allowed" && x.consumedAt === null).length,
        runStatus: run?.status ?? "missing",
        integrity,
        finalizeMs,
      };
      stats.set(point, [...(stats.get(point) ?? []), observed]);
      debug(point, id, observed);

      // Every side effect at most once, every request answered or closed, nothing left to run later.
      expect(hits, JSON.stringify(observed)).toBe(1);
      expect(observed.approvalsPending).toBe(0);
      expect(observed.allowedUnconsumed).toBe(0);
      const envelope = JSON.parse(run?.envelope ?? "{}") as { ok?: boolean; error?: { kind?: string } };
      if (observed.approvalStatus.includes("uncertain")) {
        // Ended by the human instead of repeating the call.
        expect(run?.status).toBe("error");
        expect(envelope.error?.kind).toBe("ended");
      } else {
        expect(run?.status).toBe("ok");
        expect(envelope.ok).toBe(true);
      }
      if (integrity !== null) expect(integrity).toBe("ok");
      // The client can learn the final state over MCP, from a live instance.
      const reader = await mcpClient(a?.url ?? bMcp.url, apiKey, "fault-suite");
      const resource = await reader.readResource({ uri: `toolstore://runs/${run?.id}` });
      const state = JSON.parse(String((resource.contents[0] as { text: string }).text));
      expect(state).toMatchObject({ id: run?.id, status: run?.status });
      await reader.close();
    }

    for (const point of POINTS) {
      it(
        `[FAULT]: ${makeSetup === sqliteSetup ? "SQLite" : "PostgreSQL"}, killed at "${point}": every row ends true, no side effect twice`,
        async () => {
          try {
            for (let i = 0; i < TRIALS; i++) await trial(point);
          } catch (e) {
            // A failed trial may leave its server stopped or half-used: the next point starts a new one.
            if (a) await kill9(a.child);
            a = undefined;
            throw e;
          }
        },
        TRIALS * 120_000,
      );
    }
  });
}
