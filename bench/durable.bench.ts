/**
 * Durable actions as served: a waiting action parks to the database after its hot window
 * (TOOLSTORE_PARK_AFTER_MS, default 3 s) and is resumed by replay once a human answers. Two bench
 * servers (bench/served-server.ts: the MCP handler and front server `npm start` composes, on a
 * real SQLite file), SDK clients over loopback, approvals answered through the console's tRPC
 * `approvals.decide` with a signed-in admin session:
 * - "hot": TOOLSTORE_PARK_AFTER_MS=600000 (the ceiling), the old behaviour where a waiting action
 *   stays a live QuickJS context;
 * - "durable": the default window (3 s, at most TOOLSTORE_MAX_HOT_WAITS=64 waits hot at once),
 *   after which the run is a row and its journal.
 * Measured, in interleaved rounds: approve -> action completes for a parked run against a hot one
 * on the durable server (and a hot one on the hot server); another key's one-call action p50
 * with no waiters and with the waiters; RSS added by the waiters (MCP tasks, so 10,000 waits need
 * no open requests) over a server that has just run as many finished actions, and the CPU the
 * idle server spends on them.
 *
 * Sizes: BENCH_DURABLE_WAITERS (default 10000), BENCH_DURABLE_HOT_WAITERS (the hot server's count,
 * default 2,000 at most: see below), BENCH_DURABLE_ROUNDS (approval rounds per kind, default 20).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { createDb } from "../server/db";
import { parseDatabaseUrl } from "../server/db/provider";
import { createApiKey } from "../server/services/api-keys";
import { createSession, SESSION_COOKIE } from "../server/services/auth";
import { type Benchmark, type BenchReport, type BenchRow, ms, summarize } from "./harness";
import { connect, load, ONE_CALL, type Served, startServed, stats, stop } from "./served.bench";

const WAITERS = Number(process.env.BENCH_DURABLE_WAITERS ?? 10_000);
/**
 * The hot server holds every waiter in a live sandbox job, and the pool holds at most 1,024 jobs a
 * worker and (by default) as many workers per key as CPUs: 2,048 on 2 cores. More than that queue
 * and time out, so the old behaviour is measured at 2,000 and extrapolated per waiter.
 */
const HOT_WAITERS = Number(process.env.BENCH_DURABLE_HOT_WAITERS ?? Math.min(WAITERS, 2_000));
const ROUNDS = Number(process.env.BENCH_DURABLE_ROUNDS ?? 20);
const HOT_WINDOW_MS = 600_000;
const PARK_AFTER_MS = 3_000;
/** Other-key samples per server per round (one client, back to back). */
const OTHER_CALLS = 40;
const OTHER_ROUNDS = 5;
const WAVE = 250;

/** A read, then a call that asks (lisp.run is `execute`): a replay answers the read from the journal. */
const GATED = `import { evaluate } from "toolstore/calculator";
import { run } from "toolstore/lisp";
export default async function () {
  const a = await evaluate({ expression: "6 * 7" });
  const b = await run({ program: "(+ 1 2)" });
  return [a.value, b];
}`;
/** What each of the many waiters runs: one call that asks. */
const WAITER = `import { run } from "toolstore/lisp";
export default async function () { return await run({ program: "(+ 1 2)" }); }`;

interface Side {
  name: string;
  served: Served;
  /** Cookie of a signed-in admin's console session. */
  cookie: string;
  /** A default-mode key of its own for the approval rounds. */
  approveClient: Client;
  /** Another key (auto mode) whose simple actions should not notice the waiters. */
  otherClient: Client;
  /** Clients of the waiters' key. */
  waiterClients: Client[];
}

type StatsBody = Awaited<ReturnType<typeof stats>> & {
  heapTotal?: number;
  arrayBuffers?: number;
  smaps?: { Anonymous?: number; RssFile?: number; RssShmem?: number };
  pendingApprovals?: number;
  processCpuMs?: number;
  pool?: { parkedJobs?: number; runningJobs?: number; queuedJobs?: number; workers?: number };
};
const read = (side: Side, query = "") => stats(side.served, query) as Promise<StatsBody>;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

async function startSide(name: string, dir: string, parkAfterMs: number): Promise<Side> {
  const url = `file:${path.join(dir, `${name}.db`)}`;
  const memoryFile = path.join(dir, "memory.jsonl");
  if (!fs.existsSync(memoryFile)) fs.writeFileSync(memoryFile, "");
  const served = await startServed("toolstore", {
    BENCH_DATABASE_URL: url,
    BENCH_MEMORY_FILE: memoryFile,
    TOOLSTORE_PARK_AFTER_MS: String(parkAfterMs),
    // The hot side keeps every wait hot (the old behaviour); the durable side has the default cap.
    ...(parkAfterMs === HOT_WINDOW_MS ? { TOOLSTORE_MAX_HOT_WAITS: "100000" } : {}),
  });
  // The approver signs in (a console session row, as auth.signIn makes it); the approval rounds
  // use a key of their own, so their runs never share a key with the waiters.
  const db = createDb(parseDatabaseUrl(url));
  const admin = await db.user.findFirstOrThrow({ where: { role: "admin" }, select: { id: true } });
  const { token } = await createSession(db, admin.id);
  const { key } = await createApiKey(db, admin.id, { name: "bench-approve", mode: "default" });
  await db.$disconnect();
  return {
    name,
    served,
    cookie: `${SESSION_COOKIE}=${encodeURIComponent(token)}`,
    approveClient: await connect(served, key),
    otherClient: await connect(served, served.keys.b),
    waiterClients: await Promise.all(Array.from({ length: 10 }, () => connect(served, served.keys.parked))),
  };
}

/** The console's Allow once: POST /api/trpc/approvals.decide, as the approvals page sends it. */
async function decide(side: Side, approvalId: string): Promise<void> {
  const res = await fetch(`${side.served.url}/api/trpc/approvals.decide`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-toolstore-csrf": "1", cookie: side.cookie },
    body: JSON.stringify({ approvalId, answer: "once" }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`approvals.decide answered ${res.status}: ${text.slice(0, 300)}`);
}

async function runStatus(client: Client, runId: string): Promise<string> {
  const r = await client.readResource({ uri: `toolstore://runs/${runId}` });
  const first = r.contents[0] as { text?: string } | undefined;
  return (JSON.parse(first?.text ?? "{}") as { status?: string }).status ?? "?";
}

interface Approval {
  /** Decide sent -> the execute_code result back at the client. */
  ms: number;
  /** Decide sent -> its tRPC answer. */
  decideMs: number;
  /** The run's state right before the decision (running = hot, waiting = parked). */
  state: string;
}

/**
 * One blocking execute_code of GATED: its approval id from the progress notification, then (for
 * `parked`) a wait until the run is a row, then Allow once; timed until the result arrives.
 */
async function approveOnce(side: Side, kind: "hot" | "parked"): Promise<Approval> {
  let onApproval: (id: string) => void = () => {};
  const approval = new Promise<string>((r) => {
    onApproval = r;
  });
  let runId = "";
  const calling = side.approveClient.callTool(
    { name: "execute_code", arguments: { code: GATED } },
    CallToolResultSchema,
    {
      timeout: 600_000,
      onprogress: (p) => {
        const text = p.message ?? "";
        runId ||= /Run (\S+) started/.exec(text)?.[1] ?? "";
        const id = /approvals[/#]([^\s;]+)/.exec(text)?.[1];
        if (id) onApproval(id);
      },
    },
  );
  const approvalId = await approval;
  const askedAt = performance.now();
  if (kind === "parked") {
    await sleep(PARK_AFTER_MS - 100);
    while ((await runStatus(side.approveClient, runId)) !== "waiting") {
      if (performance.now() - askedAt > 60_000) throw new Error(`run ${runId} did not park`);
      await sleep(50);
    }
  }
  const state = await runStatus(side.approveClient, runId);
  const t0 = performance.now();
  await decide(side, approvalId);
  const decided = performance.now();
  const result = await calling;
  const t1 = performance.now();
  const envelope = result.structuredContent as { ok?: boolean; result?: unknown[] } | undefined;
  if (!envelope?.ok || envelope.result?.[0] !== 42) {
    throw new Error(`${side.name} ${kind}: the action failed: ${JSON.stringify(result).slice(0, 300)}`);
  }
  return { ms: t1 - t0, decideMs: decided - t0, state };
}

type Cell = { side: Side; kind: "hot" | "parked" };

/** Interleaved approval rounds over `cells`, the order rotating each round. */
async function approvalRounds(cells: Cell[], rounds: number): Promise<Map<string, Approval[]>> {
  const out = new Map<string, Approval[]>();
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < cells.length; k++) {
      const cell = cells[(k + round) % cells.length] as Cell;
      const key = `${cell.side.name}:${cell.kind}`;
      const a = await approveOnce(cell.side, cell.kind);
      out.set(key, [...(out.get(key) ?? []), a]);
    }
  }
  return out;
}

function approvalRows(results: Map<string, Approval[]>, when: string): BenchRow[] {
  const p50 = (key: string) => summarize((results.get(key) ?? []).map((a) => a.ms)).p50;
  const rows: BenchRow[] = [];
  for (const [key, list] of results) {
    const s = summarize(list.map((a) => a.ms));
    const d = summarize(list.map((a) => a.decideMs));
    const states = new Map<string, number>();
    for (const a of list) states.set(a.state, (states.get(a.state) ?? 0) + 1);
    rows.push({
      metric: `${when}: approve -> done, ${key.replace(":", " server, ")} run: p50 / p95`,
      value: `${ms(s.p50, 1)} / ${ms(s.p95, 1)}`,
      note: `decide answered after p50 ${ms(d.p50, 1)}; run state at the decision: ${[...states].map(([k, n]) => `${k} ${n}`).join(", ")}`,
    });
  }
  const parked = p50("durable:parked");
  const hot = p50("durable:hot");
  rows.push({
    metric: `${when}: parked - hot (durable server, p50)`,
    value: ms(parked - hot, 1),
    note: `ratio ${(parked / hot).toFixed(2)}× (goal: < 20 ms above hot); vs the hot server's hot run: ${ms(parked - p50("hot:hot"), 1)}`,
  });
  return rows;
}

/** Another key's one-call action, one client, back to back, interleaved across the sides. */
async function otherKeyRounds(sides: Side[]): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (let round = 0; round < OTHER_ROUNDS; round++) {
    for (let k = 0; k < sides.length; k++) {
      const side = sides[(k + round) % sides.length] as Side;
      const r = await load([side.otherClient], OTHER_CALLS, ONE_CALL);
      if (r.failures > 0)
        throw new Error(`${side.name}: ${r.failures} other-key actions failed: ${r.firstFailure}`);
      out.set(side.name, [...(out.get(side.name) ?? []), ...r.samples]);
    }
  }
  return out;
}

/**
 * Brings the pool to the workers it keeps (TOOLSTORE_SANDBOX_WORKERS, one per core): eight clients
 * of another key at once. One client at a time starts one worker, and a second one started later
 * by the waiters' burst would be counted as their cost (a worker's thread and its QuickJS memory,
 * ~20-40 MiB, which any two concurrent actions start and the pool then keeps).
 */
async function warmPool(side: Side): Promise<void> {
  const clients = await Promise.all(
    Array.from({ length: 8 }, () => connect(side.served, side.served.keys.b)),
  );
  const r = await load(clients, 10, ONE_CALL);
  await Promise.all(clients.map((c) => c.close()));
  if (r.failures > 0) throw new Error(`${side.name}: pool warm-up failed: ${r.firstFailure}`);
}

/**
 * `n` waiters on `side` as MCP tasks (the request returns at once; the run waits in the server),
 * sent in waves so none times out in the sandbox queue; resolves when each has its pending approval.
 */
interface Filled {
  seconds: number;
  /** Each waiter's task and the client that created it (a task is its key's). */
  tasks: { taskId: string; client: Client }[];
}

async function fill(side: Side, n: number): Promise<Filled> {
  const started = performance.now();
  const tasks: Filled["tasks"] = [];
  const before = (await read(side)).pendingApprovals ?? 0;
  let sent = 0;
  while (sent < n) {
    const wave = Math.min(WAVE, n - sent);
    await Promise.all(
      Array.from({ length: wave }, async (_, i) => {
        const client = side.waiterClients[(sent + i) % side.waiterClients.length] as Client;
        const created = await client.request(
          {
            method: "tools/call",
            params: { name: "execute_code", arguments: { code: WAITER }, task: { ttl: 3_600_000 } },
          },
          CreateTaskResultSchema,
          { timeout: 120_000 },
        );
        tasks.push({ taskId: created.task.taskId, client });
      }),
    );
    sent += wave;
    const waveStarted = performance.now();
    while (((await read(side)).pendingApprovals ?? 0) < before + sent) {
      if (performance.now() - waveStarted > 120_000) {
        throw new Error(`${side.name}: ${sent} waiters sent, ${(await read(side)).pendingApprovals} pending`);
      }
      await sleep(100);
    }
  }
  return { seconds: (performance.now() - started) / 1000, tasks };
}

/**
 * The clients cancel every waiter's task (tasks/cancel); resolves once no approval is pending
 * (a parked run's approval is expired by the maintenance sweep) or `ms` passed, with the count left.
 */
async function cancelAll(side: Side, filled: Filled, ms: number): Promise<number> {
  for (let i = 0; i < filled.tasks.length; i += WAVE) {
    await Promise.all(
      filled.tasks
        .slice(i, i + WAVE)
        .map((t) => t.client.experimental.tasks.cancelTask(t.taskId).catch(() => undefined)),
    );
  }
  const end = performance.now() + ms;
  let left = (await read(side)).pendingApprovals ?? 0;
  while (left > 0 && performance.now() < end) {
    await sleep(500);
    left = (await read(side)).pendingApprovals ?? 0;
  }
  return left;
}

/** Waits until no run of `side` holds a live sandbox while it waits (all of them parked). */
async function untilReleased(side: Side, ms: number): Promise<number> {
  const end = performance.now() + ms;
  let live = (await read(side)).pool?.parkedJobs ?? 0;
  while (live > 0 && performance.now() < end) {
    await sleep(250);
    live = (await read(side)).pool?.parkedJobs ?? 0;
  }
  return live;
}

/** CPU the idle server spends per second (its timers and polls), over `ms`. */
async function idleCpu(side: Side, ms: number): Promise<number> {
  const a = (await read(side)).processCpuMs ?? 0;
  await sleep(ms);
  const b = (await read(side)).processCpuMs ?? 0;
  return ((b - a) / ms) * 1000;
}

/** Where an RSS difference is: V8's committed heap, array buffers, anonymous vs file-backed pages. */
function breakdown(a: StatsBody, b: StatsBody): string {
  const d = (f: (x: StatsBody) => number | undefined) => mib((f(b) ?? 0) - (f(a) ?? 0));
  return `of which V8 heap committed ${d((x) => x.heapTotal)}, array buffers ${d((x) => x.arrayBuffers)}; anonymous ${d((x) => x.smaps?.Anonymous)}, file ${d((x) => x.smaps?.RssFile)}, shared ${d((x) => x.smaps?.RssShmem)}`;
}

async function durable(): Promise<BenchReport[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-bench-durable-"));
  const sides: Side[] = [];
  const reports: BenchReport[] = [];
  const emit = (r: BenchReport) => reports.push(r);
  try {
    sides.push(await startSide("hot", dir, HOT_WINDOW_MS));
    sides.push(await startSide("durable", dir, PARK_AFTER_MS));
    const [hot, dur] = sides as [Side, Side];
    const cells: Cell[] = [
      { side: hot, kind: "hot" },
      { side: dur, kind: "hot" },
      { side: dur, kind: "parked" },
    ];
    // Warm-up: workers, modules, the tRPC path, and a replay on the durable side.
    await approvalRounds(cells, 2);
    await otherKeyRounds(sides);
    for (const side of sides) await warmPool(side);
    console.error("durable bench: warm");

    const idleApprovals = await approvalRounds(cells, ROUNDS);
    const idleOther = await otherKeyRounds(sides);
    const idleCpuHot = await idleCpu(hot, 5_000);
    const idleCpuDur = await idleCpu(dur, 5_000);
    // The RSS baseline is a server that has just run as many actions as there will be waiters
    // (a read each, finished): a process's RSS keeps the high-water of its allocator and of V8's
    // heap after a burst, and from one run to the next that swung the waiters' figure between +25
    // and +90 MiB while the memory they hold (the drop when they are cancelled) stayed 12-18 MiB.
    // Both readings now follow a burst of the same size; the burst's own growth is reported.
    const fresh = await read(dur, "gc=1");
    const burst = await load(dur.waiterClients, Math.ceil(WAITERS / dur.waiterClients.length), ONE_CALL);
    if (burst.failures > 0) throw new Error(`durable: the baseline burst failed: ${burst.firstFailure}`);
    const before = { hot: await read(hot, "gc=1"), dur: await read(dur, "gc=1") };
    console.error("durable bench: idle rounds done");

    // The waiters: the durable side first (they park after 3 s), then the hot side, whose
    // 10-minute window must still be open when it is measured.
    const filledDur = await fill(dur, WAITERS);
    const stillLiveDur = await untilReleased(dur, 60_000);
    const afterDur = await read(dur, "gc=1");
    console.error(`durable bench: ${WAITERS} durable waiters in ${filledDur.seconds.toFixed(0)} s`);
    const filledHot = await fill(hot, HOT_WAITERS);
    const afterHot = await read(hot, "gc=1");
    console.error(`durable bench: ${HOT_WAITERS} hot waiters in ${filledHot.seconds.toFixed(0)} s`);

    const busyOther = await otherKeyRounds(sides);
    const busyCpuHot = await idleCpu(hot, 5_000);
    const busyCpuDur = await idleCpu(dur, 5_000);
    const busyApprovals = await approvalRounds(cells, Math.max(2, Math.round(ROUNDS / 2)));
    // After a while: workers retire, the GC catches up; what a waiting deployment keeps.
    await sleep(15_000);
    const settled = { hot: await read(hot, "gc=1"), dur: await read(dur, "gc=1") };
    // What stays when the waiters are gone: the high-water mark of having run them, not their cost.
    const leftDur = await cancelAll(dur, filledDur, 180_000);
    const leftHot = await cancelAll(hot, filledHot, 180_000);
    await sleep(5_000);
    const ended = { hot: await read(hot, "gc=1"), dur: await read(dur, "gc=1") };
    console.error("durable bench: waiters cancelled");

    const grown = (a: StatsBody, b: StatsBody) => b.rss - a.rss;
    const perWaiter = (bytes: number, n: number) => `${(bytes / n / 1024).toFixed(1)} KiB per waiter`;
    const hotLive = afterHot.pool?.parkedJobs ?? 0;
    const hotTo10k = (grown(before.hot, afterHot) / HOT_WAITERS) * 10_000;
    emit({
      title: `${WAITERS} actions waiting for approval (MCP tasks): RSS of the server process`,
      rows: [
        {
          metric: `durable: RSS added by ${WAITERS} parked waiters (forced GC)`,
          value: mib(grown(before.dur, afterDur)),
          note: `${mb(grown(before.dur, afterDur))} (goal < 50 MB for 10,000); ${perWaiter(grown(before.dur, afterDur), WAITERS)}; live sandboxes left ${stillLiveDur}; main JS heap +${mib(afterDur.heapUsed - before.dur.heapUsed)}; workers ${before.dur.pool?.workers} -> ${afterDur.pool?.workers}; filled in ${filledDur.seconds.toFixed(0)} s; ${breakdown(before.dur, afterDur)}`,
        },
        {
          metric: `durable: RSS added by the baseline's burst of ${burst.samples.length} finished actions`,
          value: mib(before.dur.rss - fresh.rss),
          note: `the high-water the waiters are measured above (${(burst.samples.length / burst.seconds).toFixed(0)} actions/s); ${breakdown(fresh, before.dur)}`,
        },
        {
          metric: "durable: the same 15 s later",
          value: mib(grown(before.dur, settled.dur)),
          note: `${mb(grown(before.dur, settled.dur))}; workers ${before.dur.pool?.workers} -> ${settled.dur.pool?.workers}`,
        },
        {
          metric: `hot (old behaviour): RSS added by ${HOT_WAITERS} live waiters`,
          value: mib(grown(before.hot, afterHot)),
          note: `${perWaiter(grown(before.hot, afterHot), HOT_WAITERS)}; live sandboxes ${hotLive}; main JS heap +${mib(afterHot.heapUsed - before.hot.heapUsed)}; filled in ${filledHot.seconds.toFixed(0)} s${HOT_WAITERS === 10_000 ? "" : `; per 10,000: ${mb(hotTo10k)} (extrapolated)`}`,
        },
        {
          metric: "hot: the same 15 s later",
          value: mib(grown(before.hot, settled.hot)),
          note: `workers ${before.hot.pool?.workers} -> ${settled.hot.pool?.workers}; live sandboxes ${settled.hot.pool?.parkedJobs}`,
        },
        {
          metric: "after the waiters were cancelled: RSS above before, durable / hot",
          value: `${mib(grown(before.dur, ended.dur))} / ${mib(grown(before.hot, ended.hot))}`,
          note: `what the waiters held = the drop: durable ${mib(settled.dur.rss - ended.dur.rss)}, hot ${mib(settled.hot.rss - ended.hot.rss)}; main heap above before ${mib(ended.dur.heapUsed - before.dur.heapUsed)} / ${mib(ended.hot.heapUsed - before.hot.heapUsed)}; approvals still pending ${leftDur} / ${leftHot}; durable ${breakdown(before.dur, ended.dur)}`,
        },
        {
          metric: "durable / hot, RSS added per waiter",
          value: `${(grown(before.dur, afterDur) / WAITERS / (grown(before.hot, afterHot) / HOT_WAITERS)).toFixed(3)}×`,
        },
        {
          metric: "RSS before the waiters: hot / durable",
          value: `${mib(before.hot.rss)} / ${mib(before.dur.rss)}`,
        },
      ],
    });

    const otherRow = (name: string): BenchRow => {
      const a = summarize(idleOther.get(name) ?? []);
      const b = summarize(busyOther.get(name) ?? []);
      const n = name === "durable" ? WAITERS : HOT_WAITERS;
      return {
        metric: `${name}: other key's one-call action p50, no waiters / ${n} waiters`,
        value: `${ms(a.p50)} / ${ms(b.p50)}`,
        note: `ratio ${(b.p50 / a.p50).toFixed(2)}× (goal: usual speed); p95 ${ms(a.p95)} / ${ms(b.p95)}; ${OTHER_ROUNDS}×${OTHER_CALLS} calls each, interleaved`,
      };
    };
    emit({
      title: "another key's actions while the waiters wait",
      rows: [
        otherRow("durable"),
        otherRow("hot"),
        {
          metric: "idle CPU of the server, no waiters / with waiters: durable",
          value: `${idleCpuDur.toFixed(0)} / ${busyCpuDur.toFixed(0)} ms/s`,
          note: "its polls of the parked runs and tasks",
        },
        {
          metric: "idle CPU of the server, no waiters / with waiters: hot",
          value: `${idleCpuHot.toFixed(0)} / ${busyCpuHot.toFixed(0)} ms/s`,
        },
      ],
    });

    emit({
      title: `approve -> action completes (a read, then a call that asks; Allow once through tRPC approvals.decide), ${ROUNDS} interleaved rounds`,
      rows: [
        ...approvalRows(idleApprovals, "no waiters"),
        ...approvalRows(busyApprovals, `${WAITERS}/${HOT_WAITERS} waiters`),
      ],
    });
  } finally {
    for (const side of sides) {
      await Promise.allSettled(
        [side.approveClient, side.otherClient, ...side.waiterClients].map((c) => c.close()),
      );
      await stop(side.served);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const machine = `${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)} at the end, shared machine; SQLite; bench server`;
  for (const r of reports) r.title = `${r.title} [${machine}]`;
  return reports;
}

export const benchmarks: Benchmark[] = [{ name: "durable: parked vs hot waiting actions", run: durable }];
