/**
 * The served path: ToolStore's real MCP HTTP handler in its own process, on a real
 * SQLite file (PostgreSQL when BENCH_DATABASE_URL=postgresql://... is set), over loopback with the
 * SDK Client, against a minimal SDK server in another process whose tool runs the same action code
 * in a bare fresh QuickJS runtime. Latency and throughput are measured in interleaved rounds and
 * reported as ratios. Then, on ToolStore alone: RSS after 1,000 and 10,000 actions (forced GC),
 * fairness under another key's infinite loops, 1,000 parked approvals, 200 clients, and a SQLite
 * file locked by another process.
 *
 * Sizes: BENCH_SERVED_SCALE=0.1 shrinks every count and duration (a quick look); 1 is the issue's.
 */
import { type ChildProcess, fork, spawn } from "node:child_process";
import { setMaxListeners } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Benchmark, type BenchReport, type BenchRow, ms, printReport, summarize } from "./harness";

const SCALE = Number(process.env.BENCH_SERVED_SCALE ?? 1);
const scaled = (n: number, min = 1) => Math.max(min, Math.round(n * SCALE));
const DEADLINE_MS = 5_000;

export const ONE_CALL = `import { evaluate } from "toolstore/calculator";
export default async function () { return await evaluate({ expression: "6 * 7" }); }`;
const TWO_SEQUENTIAL = `import { evaluate } from "toolstore/calculator";
export default async function () {
  const a = await evaluate({ expression: "6 * 7" });
  const b = await evaluate({ expression: "6 * 8" });
  return [a, b];
}`;
const TWO_PARALLEL = `import { evaluate } from "toolstore/calculator";
export default async function () {
  return await Promise.all([evaluate({ expression: "6 * 7" }), evaluate({ expression: "6 * 8" })]);
}`;
export const FIVE_SEQUENTIAL = `import { evaluate } from "toolstore/calculator";
export default async function () {
  const values = [];
  for (let i = 1; i <= 5; i++) values.push((await evaluate({ expression: \`6 * \${i}\` })).value);
  return values;
}`;
const TRIVIAL = `export default async function () { return 1; }`;
const LOOP = `export default async function () { while (true) {} }`;
const PARK = `import { run } from "toolstore/lisp";
export default async function () { return await run({ program: "(+ 1 2)" }); }`;

export interface Served {
  url: string;
  keys: Record<string, string>;
  child: ChildProcess;
}

export function startServed(flavour: "toolstore" | "baseline", env: Record<string, string>): Promise<Served> {
  // BENCH_SERVED_ROOT: serve ToolStore from another checkout (e.g. the commit before a change).
  const root = flavour === "toolstore" ? path.resolve(process.env.BENCH_SERVED_ROOT ?? ".") : process.cwd();
  const child = fork(path.join(root, "bench/served-server.ts"), [flavour], {
    cwd: root,
    execArgv: ["--expose-gc", "--import", "tsx"],
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once("line", (line) => {
      const { url, keys } = JSON.parse(line) as { url: string; keys: Record<string, string> };
      resolve({ url, keys, child });
    });
    child.once("exit", (code) => reject(new Error(`${flavour} server exited with code ${code}`)));
  });
}

export async function stop(served: Served) {
  if (served.child.exitCode !== null || served.child.signalCode !== null) return;
  served.child.kill("SIGKILL");
  await new Promise((r) => served.child.once("exit", r));
}

export async function stats(
  served: Served,
  query = "gc=1",
): Promise<{ rss: number; heapUsed: number; lagP99Ms: number } & Record<string, unknown>> {
  const res = await fetch(`${served.url}/__bench/stats?${query}`);
  return (await res.json()) as { rss: number; heapUsed: number; lagP99Ms: number };
}

export async function connect(served: Served, key?: string): Promise<Client> {
  const client = new Client({ name: "bench", version: "1" });
  const headers: Record<string, string> = key ? { Authorization: `Bearer ${key}` } : {};
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${served.url}/api/mcp`), { requestInit: { headers } }),
  );
  return client;
}

export async function execute(
  client: Client,
  code: string,
  timeoutMs = 120_000,
): Promise<Record<string, unknown>> {
  const r = (await client.callTool({ name: "execute_code", arguments: { code } }, undefined, {
    timeout: timeoutMs,
  })) as { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: unknown };
  const text = r.content.find((c) => c.type === "text")?.text ?? "";
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { ok: false, text };
  }
  return { ...parsed, isError: r.isError === true };
}

/**
 * The result each measured action must return, on both sides: a side that answers with an error
 * (or another value) does less work, and would make every ratio against it meaningless.
 */
const EXPECTED = new Map<string, string>([
  [ONE_CALL, JSON.stringify({ expression: "6 * 7", value: 42 })],
  [
    TWO_SEQUENTIAL,
    JSON.stringify([
      { expression: "6 * 7", value: 42 },
      { expression: "6 * 8", value: 48 },
    ]),
  ],
  [
    TWO_PARALLEL,
    JSON.stringify([
      { expression: "6 * 7", value: 42 },
      { expression: "6 * 8", value: 48 },
    ]),
  ],
  [FIVE_SEQUENTIAL, "[6,12,18,24,30]"],
  [TRIVIAL, "1"],
]);

/**
 * `clients` clients each send `perClient` calls back to back; samples are per-call latencies. A
 * call fails if it errs or (for the actions in EXPECTED) returns anything but the expected result.
 */
export async function load(clients: Client[], perClient: number, code: string) {
  const samples: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      for (let i = 0; i < perClient; i++) {
        const t = performance.now();
        const r: Record<string, unknown> = await execute(client, code).catch((error) => ({
          isError: true,
          ok: false,
          error: String(error),
        }));
        samples.push(performance.now() - t);
        const expected = EXPECTED.get(code);
        if (
          r.isError ||
          r.ok === false ||
          (expected !== undefined && JSON.stringify(r.result) !== expected)
        ) {
          failures += 1;
          firstFailure ??= JSON.stringify(r).slice(0, 300);
        }
      }
    }),
  );
  return { samples, seconds: (performance.now() - started) / 1000, failures, firstFailure };
}

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

async function latencyAndThroughput(ours: Served, base: Served): Promise<BenchReport[]> {
  const rounds = scaled(4, 2);
  const rows: BenchRow[] = [];
  const oursClients = await Promise.all(Array.from({ length: 32 }, () => connect(ours, ours.keys.a)));
  const baseClients = await Promise.all(Array.from({ length: 32 }, () => connect(base)));
  // Warm both sides (workers, modules, caches), and check that both answer every measured action.
  for (const code of [ONE_CALL, TWO_SEQUENTIAL, TWO_PARALLEL, FIVE_SEQUENTIAL]) {
    for (const [side, clients] of [
      ["ToolStore", oursClients],
      ["baseline", baseClients],
    ] as const) {
      const r = await load(clients.slice(0, 8), 5, code);
      if (r.failures > 0)
        throw new Error(`${side} failed ${r.failures} of 40 warm-up actions: ${r.firstFailure}`);
    }
  }
  const result: Record<
    string,
    { ours: number[]; base: number[]; oursS: number; baseS: number; fail: number }
  > = {};
  for (let round = 0; round < rounds; round++) {
    for (const n of [1, 8, 32]) {
      const perClient = Math.max(3, Math.round(scaled(160) / n));
      result[n] ??= { ours: [], base: [], oursS: 0, baseS: 0, fail: 0 };
      const slot = result[n];
      const order = round % 2 === 0 ? (["ours", "base"] as const) : (["base", "ours"] as const);
      for (const side of order) {
        const r = await load(
          side === "ours" ? oursClients.slice(0, n) : baseClients.slice(0, n),
          perClient,
          ONE_CALL,
        );
        slot[side].push(...r.samples);
        slot.fail += r.failures;
        if (side === "ours") slot.oursS += r.seconds;
        else slot.baseS += r.seconds;
      }
    }
  }
  let rps1 = 0;
  for (const n of [1, 8, 32]) {
    const slot = result[n];
    if (!slot) continue;
    const o = summarize(slot.ours);
    const b = summarize(slot.base);
    const oRps = slot.ours.length / slot.oursS;
    const bRps = slot.base.length / slot.baseS;
    if (n === 1) rps1 = oRps;
    rows.push(
      {
        metric: `${n} client${n > 1 ? "s" : ""}: p50 ToolStore / baseline`,
        value: `${ms(o.p50)} / ${ms(b.p50)}`,
        note: `ratio ${ratio(o.p50, b.p50)}${n === 1 ? " (goal ≤ 3×)" : ""}; p99 ${ms(o.p99)} / ${ms(b.p99)}`,
      },
      {
        metric: `${n} client${n > 1 ? "s" : ""}: req/s ToolStore / baseline`,
        value: `${oRps.toFixed(0)} / ${bRps.toFixed(0)}`,
        note: `ratio ${ratio(oRps, bRps)}${n === 8 ? " (goal ≥ 0.5×)" : ""}${n > 1 ? `; vs 1 client ${ratio(oRps, rps1)}` : ""}${slot.fail ? `; ${slot.fail} FAILED` : ""}`,
      },
    );
  }

  // Extra capability call: one call vs two sequential vs two in Promise.all, 1 client, interleaved;
  // five sequential calls give the same cost per extra call with a quarter of the noise.
  const extra: Record<string, { ours: number[]; base: number[]; fail: number }> = {};
  const perShape = scaled(60, 5);
  for (let round = 0; round < rounds; round++) {
    for (const [name, code] of [
      ["one", ONE_CALL],
      ["seq", TWO_SEQUENTIAL],
      ["par", TWO_PARALLEL],
      ["five", FIVE_SEQUENTIAL],
    ] as const) {
      extra[name] ??= { ours: [], base: [], fail: 0 };
      const slot = extra[name];
      for (const side of ["ours", "base"] as const) {
        const r = await load((side === "ours" ? oursClients : baseClients).slice(0, 1), perShape, code);
        slot[side].push(...r.samples);
        slot.fail += r.failures;
      }
    }
  }
  const p50 = (xs: number[] | undefined) => summarize(xs ?? []).p50;
  const shapes = [
    ["seq", "sequential", 1],
    ["par", "Promise.all", 1],
    ["five", "sequential, per call of 4 more in a run of 5", 4],
  ] as const;
  for (const [shape, label, extraCalls] of shapes) {
    const oursExtra = (p50(extra[shape]?.ours) - p50(extra.one?.ours)) / extraCalls;
    const baseExtra = (p50(extra[shape]?.base) - p50(extra.one?.base)) / extraCalls;
    const failed = (extra[shape]?.fail ?? 0) + (extra.one?.fail ?? 0);
    rows.push({
      metric: `extra call (${label}): ToolStore / baseline`,
      value: `${ms(oursExtra)} / ${ms(baseExtra)}`,
      note: `difference ${ms(oursExtra - baseExtra)} (goal ≤ 1 ms)${failed ? `; ${failed} FAILED` : ""}`,
    });
  }
  await Promise.all([...oursClients, ...baseClients].map((c) => c.close()));
  return [{ title: `served path vs bare QuickJS over MCP (${rounds} interleaved rounds)`, rows }];
}

async function memoryAfterActions(ours: Served): Promise<BenchReport> {
  const clients = await Promise.all(Array.from({ length: 8 }, () => connect(ours, ours.keys.a)));
  const first = scaled(1000, 50);
  const total = scaled(10_000, 100);
  const before = await stats(ours);
  await load(clients, Math.ceil(first / 8), ONE_CALL);
  const at1k = await stats(ours);
  await load(clients, Math.ceil((total - first) / 8), ONE_CALL);
  const at10k = await stats(ours);
  await Promise.all(clients.map((c) => c.close()));
  return {
    title: "RSS of the served process after actions (forced GC)",
    rows: [
      { metric: "RSS before", value: mib(before.rss) },
      { metric: `RSS after ${first} actions`, value: mib(at1k.rss) },
      {
        metric: `RSS after ${total} actions`,
        value: mib(at10k.rss),
        note: `${ratio(at10k.rss, at1k.rss)} of the first (goal ≤ 1.10×)`,
      },
    ],
  };
}

async function fairness(ours: Served): Promise<BenchReport> {
  const loops = scaled(50, 5);
  const loopClients = await Promise.all(Array.from({ length: 5 }, () => connect(ours, ours.keys.loops)));
  const other = await connect(ours, ours.keys.b);
  await execute(other, TRIVIAL);
  const loopResults: { ms: number; kind: unknown; durationMs: unknown }[] = [];
  const started = performance.now();
  const loopsDone = Promise.all(
    Array.from({ length: loops }, async (_, i) => {
      const client = loopClients[i % loopClients.length] as Client;
      const t = performance.now();
      const r = await execute(client, LOOP, 600_000);
      loopResults.push({
        ms: performance.now() - t,
        kind: (r.error as { kind?: string } | undefined)?.kind ?? r.text,
        durationMs: r.durationMs,
      });
    }),
  );
  await new Promise((r) => setTimeout(r, 500));
  const trivial: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    await execute(other, TRIVIAL);
    trivial.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 200));
  }
  await loopsDone;
  const wall = (performance.now() - started) / 1000;
  const kinds = new Map<string, number>();
  for (const r of loopResults) kinds.set(String(r.kind), (kinds.get(String(r.kind)) ?? 0) + 1);
  const timeouts = loopResults.filter((r) => r.kind === "timeout").map((r) => Number(r.durationMs));
  const t = summarize(trivial);
  await Promise.all([...loopClients, other].map((c) => c.close()));
  return {
    title: `fairness: one key sends ${loops} infinite loops (deadline ${DEADLINE_MS} ms), another key sends \`return 1\``,
    rows: [
      {
        metric: "other key's trivial action: p50 / max",
        value: `${ms(t.p50)} / ${ms(Math.max(...trivial))}`,
        note: "goal: answered within 1 s",
      },
      {
        metric: "loops that ended as timeout: run duration max",
        value: timeouts.length ? ms(Math.max(...timeouts)) : "-",
        note: `deadline + ${timeouts.length ? ms(Math.max(...timeouts) - DEADLINE_MS) : "-"} (goal ≤ +1 s); ${timeouts.length} of ${loops}`,
      },
      {
        metric: "loop outcomes",
        value: [...kinds].map(([k, n]) => `${k.slice(0, 40)}: ${n}`).join(", "),
        note: `all answered after ${wall.toFixed(1)} s`,
      },
    ],
  };
}

const poolWorkers = (x: Record<string, unknown>) =>
  (x.pool as { workers?: number } | undefined)?.workers ?? 0;

async function parkedApprovals(ours: Served): Promise<BenchReport> {
  const parked = scaled(1000, 20);
  const parkClients = await Promise.all(Array.from({ length: 10 }, () => connect(ours, ours.keys.parked)));
  const other = await Promise.all(Array.from({ length: 4 }, () => connect(ours, ours.keys.b)));
  const baseline = await load(other, scaled(40, 5), ONE_CALL);
  const before = await stats(ours, "gc=1&reset=1");
  const controller = new AbortController();
  // One signal for all the parked requests: each adds its listener.
  setMaxListeners(parked + 10, controller.signal);
  const pendingApprovals = async () =>
    ((await stats(ours, "")) as { pendingApprovals?: number }).pendingApprovals ?? 0;
  // Sent in waves: the server's deadline (DEADLINE_MS) counts time queued for a sandbox, and a
  // thousand actions sent at once would mostly time out in the queue before they could park.
  const pending: Promise<unknown>[] = [];
  const t0 = performance.now();
  const wave = 100;
  while (pending.length < parked && performance.now() - t0 < 180_000) {
    const sent = Math.min(parked, pending.length + wave);
    for (let i = pending.length; i < sent; i++) {
      pending.push(
        (parkClients[i % parkClients.length] as Client)
          .callTool({ name: "execute_code", arguments: { code: PARK } }, undefined, {
            timeout: 3_600_000,
            signal: controller.signal,
          })
          .catch(() => undefined),
      );
    }
    // Wait until this wave is parked (each action has made its call and its approval is pending).
    while ((await pendingApprovals()) < sent && performance.now() - t0 < 180_000) {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const parkSeconds = (performance.now() - t0) / 1000;
  await stats(ours, "reset=1");
  const during = await load(other, scaled(40, 5), ONE_CALL);
  const after = await stats(ours, "gc=1");
  const a = summarize(baseline.samples);
  const d = summarize(during.samples);
  controller.abort();
  await Promise.allSettled(pending);
  await Promise.all([...parkClients, ...other].map((c) => c.close()));
  return {
    title: `${parked} actions parked on approvals while another key runs (4 clients)`,
    rows: [
      {
        metric: "other key p50 before / while parked",
        value: `${ms(a.p50)} / ${ms(d.p50)}`,
        note: `ratio ${ratio(d.p50, a.p50)} (goal: usual speed); failures ${during.failures}`,
      },
      { metric: "event-loop lag p99 while parked", value: ms(after.lagP99Ms), note: "goal < 50 ms" },
      {
        metric: "RSS added by the parked actions",
        value: mib(after.rss - before.rss),
        note: `${((after.rss - before.rss) / 1e6).toFixed(0)} MB (goal < 200 MB); pending approvals seen: ${(after as { pendingApprovals?: number }).pendingApprovals ?? "?"}; workers ${poolWorkers(before)} → ${poolWorkers(after)}`,
      },
      {
        metric: "of which the main thread's JS heap",
        value: mib(after.heapUsed - before.heapUsed),
        note: "the rest is the sandbox workers' runtimes and the process's buffers",
      },
      {
        metric: "time to park them",
        value: `${parkSeconds.toFixed(1)} s`,
        note: `sent in waves of ${wave}`,
      },
    ],
  };
}

async function manyClients(ours: Served): Promise<BenchReport> {
  const n = scaled(200, 10);
  const seconds = scaled(60, 5);
  const start = await stats(ours);
  const clients = await Promise.all(Array.from({ length: n }, () => connect(ours, ours.keys.a)));
  const samples: number[] = [];
  const pageSamples: number[] = [];
  let failures = 0;
  const until = performance.now() + seconds * 1000;
  const page = (async () => {
    while (performance.now() < until) {
      const t = performance.now();
      await (await fetch(`${ours.url}/`)).text();
      pageSamples.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < until) {
        const t = performance.now();
        const r = await execute(client, ONE_CALL, 600_000).catch(() => ({ isError: true }));
        samples.push(performance.now() - t);
        if ((r as { isError?: boolean }).isError) failures += 1;
      }
    }),
  );
  await page;
  await Promise.all(clients.map((c) => c.close()));
  await new Promise((r) => setTimeout(r, 2_000));
  const end = await stats(ours);
  // Workers added beyond the pool's size under load retire after 10 s idle, taking their heaps.
  const workers = poolWorkers;
  const idleSince = performance.now();
  let settled = await stats(ours, "gc=1");
  while (workers(settled) > workers(start) && performance.now() - idleSince < 30_000) {
    await new Promise((r) => setTimeout(r, 1_000));
    settled = await stats(ours, "gc=1");
  }
  const settledAfterS = (performance.now() - idleSince) / 1000 + 2;
  const s = summarize(samples);
  const p = summarize(pageSamples);
  return {
    title: `${n} concurrent MCP clients for ${seconds} s`,
    rows: [
      {
        metric: "execute_code p50 / p99",
        value: `${ms(s.p50)} / ${ms(s.p99)}`,
        note: `p99/p50 ${ratio(s.p99, s.p50)} (goal ≤ 10×); ${samples.length} calls, ${failures} failed`,
      },
      { metric: "GET / p50 / p99", value: `${ms(p.p50)} / ${ms(p.p99)}`, note: "goal p99 < 200 ms" },
      {
        metric: "RSS before / 2 s after the load",
        value: `${mib(start.rss)} / ${mib(end.rss)}`,
        note: `${ratio(end.rss, start.rss)}; workers ${workers(start)} → ${workers(end)} (the extra ones still idle)`,
      },
      {
        metric: "RSS once idle, after a forced GC",
        value: mib(settled.rss),
        note: `${ratio(settled.rss, start.rss)} of before (goal ≤ 1.20×), ${settledAfterS.toFixed(0)} s after the load, ${workers(settled)} workers; main JS heap ${mib(start.heapUsed)} → ${mib(settled.heapUsed)}`,
      },
    ],
  };
}

async function lockedDatabase(ours: Served, dbFile: string): Promise<BenchReport> {
  const holdMs = scaled(10_000, 2_000);
  const client = await connect(ours, ours.keys.a);
  await execute(client, ONE_CALL);
  // Another process holds the write lock on the file for holdMs.
  const script = `const D=require(${JSON.stringify(path.resolve("node_modules/better-sqlite3"))});const d=new D(${JSON.stringify(dbFile)});d.pragma("busy_timeout=0");d.exec("BEGIN IMMEDIATE");d.prepare("INSERT INTO Setting(key,value,updatedAt) VALUES('bench-lock','x',0)").run();process.stdout.write("locked\\n");setTimeout(()=>{d.exec("ROLLBACK");process.exit(0)},${holdMs});`;
  const lock = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const lockExited = new Promise((r) => lock.once("exit", r));
  await new Promise((r) => lock.stdout.once("data", r));
  const pageSamples: number[] = [];
  const started = performance.now();
  const action = execute(client, ONE_CALL, 600_000).then(
    (r) => ({ ms: performance.now() - started, ok: r.ok === true }),
    () => ({ ms: performance.now() - started, ok: false }),
  );
  while (performance.now() - started < holdMs) {
    const t = performance.now();
    await (await fetch(`${ours.url}/`)).text();
    pageSamples.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 100));
  }
  const done = await action;
  await lockExited;
  await client.close();
  const p = summarize(pageSamples);
  return {
    title: `SQLite file write-locked by another process for ${holdMs / 1000} s`,
    rows: [
      {
        metric: "GET / p50 / max while locked",
        value: `${ms(p.p50)} / ${ms(Math.max(...pageSamples))}`,
        note: `${pageSamples.length} requests (goal: keeps answering)`,
      },
      {
        metric: "an execute_code sent at the lock",
        value: ms(done.ms),
        note: done.ok ? "succeeded" : "failed",
      },
    ],
  };
}

async function servedPath(): Promise<BenchReport[]> {
  const pg = process.env.BENCH_DATABASE_URL?.startsWith("postgres");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-bench-served-"));
  const dbFile = path.join(dir, "served.db");
  const env: Record<string, string> = {
    BENCH_DATABASE_URL: pg ? (process.env.BENCH_DATABASE_URL as string) : `file:${dbFile}`,
    BENCH_ACTION_TIMEOUT_MS: String(DEADLINE_MS),
  };
  const only = process.env.BENCH_SERVED_ONLY?.split(",");
  const want = (name: string) => !only || only.includes(name);
  const reports: BenchReport[] = [];
  const ours = await startServed("toolstore", env);
  const base = await startServed("baseline", {});
  // A section that fails (e.g. requests time out) is reported as such; the others still run.
  const section = async (name: string, run: () => Promise<BenchReport | BenchReport[]>) => {
    if (!want(name)) return;
    try {
      const out = await run();
      for (const r of Array.isArray(out) ? out : [out]) {
        reports.push(r);
        // Printed as soon as measured too, so a long run that is stopped keeps what it had.
        printReport(r);
      }
    } catch (error) {
      reports.push({
        title: `${name}: FAILED`,
        rows: [
          { metric: "error", value: String(error instanceof Error ? error.message : error).slice(0, 200) },
        ],
      });
    }
    console.error(`served bench: ${name} done`);
  };
  try {
    await section("latency", () => latencyAndThroughput(ours, base));
    await stop(base);
    await section("memory", () => memoryAfterActions(ours));
    await section("fairness", () => fairness(ours));
    await section("parked", () => parkedApprovals(ours));
    await section("clients", () => manyClients(ours));
    if (!pg) await section("locked", () => lockedDatabase(ours, dbFile));
  } finally {
    await stop(ours);
    await stop(base);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const machine = `${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)} at the end, shared machine; scale ${SCALE}; ${pg ? "PostgreSQL" : "SQLite"}`;
  for (const r of reports) r.title = `${r.title} [${machine}]`;
  return reports;
}

export const benchmarks: Benchmark[] = [
  { name: "served: the MCP path as served vs bare QuickJS", run: servedPath },
];
