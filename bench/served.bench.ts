/**
 * The served path, as users start it: `npm start` (scripts/start.ts, its serving process
 * scripts/serve.ts) on a real SQLite file (PostgreSQL databases beside BENCH_DATABASE_URL when it
 * is postgresql://...), over loopback with the SDK Client; beside it the bench server (the same
 * MCP handler and front server in a process without Next.js, bench/served-server.ts), and the
 * floor: a minimal SDK server whose tool runs the same action in a fresh bare QuickJS runtime and
 * context, the calculator toolset evaluated once beside it. Latency and throughput are measured in
 * interleaved rounds and reported as ratios (npm start / floor, and npm start / bench server, which
 * should agree). Then: server-memory's read_graph through an action vs a direct SDK call, and 200
 * clients against the `npm start` process (RSS from /proc); on the bench server (which can force a
 * GC and reports its pool): RSS after 1,000 and 10,000 actions, fairness under another key's
 * infinite loops, 1,000 parked approvals, and a SQLite file locked by another process.
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
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { servingEnv, servingNodeFlags } from "../scripts/serving-env";
import {
  type Benchmark,
  type BenchReport,
  type BenchRow,
  ms,
  printReport,
  summarize,
  writeMemoryGraph,
} from "./harness";

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

export const READ_GRAPH = `import { read_graph } from "toolstore/memory";
export default async function () { return (await read_graph({})).entities.length; }`;
const TWENTY = `export default async function () { return 20; }`;

export interface Served {
  url: string;
  keys: Record<string, string>;
  child: ChildProcess;
  /** The process that serves (for `npm start`, its serving child), read through /proc. */
  pid?: number;
}

function readLine(child: ChildProcess, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`${what} exited with code ${code}`)));
  });
}

type Flavour = "toolstore" | "baseline" | "baseline-parse" | "seed";

export function startServed(
  flavour: Flavour,
  env: Record<string, string>,
  // BENCH_SERVED_ROOT: serve ToolStore from another checkout (e.g. the commit before a change).
  // startProduct seeds with the checkout it starts, so each database gets that checkout's schema.
  root = flavour === "toolstore" ? path.resolve(process.env.BENCH_SERVED_ROOT ?? ".") : process.cwd(),
): Promise<Served> {
  const child = fork(path.join(root, "bench/served-server.ts"), [flavour], {
    cwd: root,
    // BENCH_PROFILE_DIR: the bench servers write profiles too (one per thread), as npm start does.
    execArgv: [...servingNodeFlags(["--expose-gc", ...profileFlags()]), "--import", "tsx"],
    env: servingEnv({ ...process.env, ...env }),
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  return readLine(child, `${flavour} server`).then((line) => {
    const { url, keys } = JSON.parse(line) as { url: string; keys: Record<string, string> };
    return { url, keys, child, ...(child.pid ? { pid: child.pid } : {}) };
  });
}

/** `node --cpu-prof` flags when BENCH_PROFILE_DIR names a directory for the profiles. */
function profileFlags(): string[] {
  const dir = process.env.BENCH_PROFILE_DIR;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
}

/**
 * ToolStore as users start it: `npm start` (scripts/start.ts, which builds if needed and serves
 * through scripts/serve.ts) on a database the seed step prepared. BENCH_PROFILE_DIR: started as
 * `node --cpu-prof --cpu-prof-dir=<dir> --import tsx scripts/start.ts`, whose flags start.ts
 * passes to the serving process (one profile per process and thread, written when it stops).
 */
export async function startProduct(
  env: Record<string, string>,
  port: number,
  root = path.resolve(process.env.BENCH_SERVED_ROOT ?? "."),
  // BENCH_SERVED_NODE_FLAGS: more Node/V8 flags for the serving process (start.ts passes them on).
  nodeFlags = process.env.BENCH_SERVED_NODE_FLAGS ?? "",
): Promise<Served> {
  const seeded = await startServed("seed", env, root);
  await new Promise((r) => seeded.child.once("exit", r));
  const flags = [...profileFlags(), ...nodeFlags.split(" ").filter(Boolean)];
  const child = spawn(process.execPath, [...flags, "--import", "tsx", path.join(root, "scripts/start.ts")], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: env.BENCH_DATABASE_URL ?? "",
      HOST: "127.0.0.1",
      PORT: String(port),
      TOOLSTORE_MCP_RATE_LIMIT: "100000000",
      TOOLSTORE_ACTION_TIMEOUT_MS: env.BENCH_ACTION_TIMEOUT_MS ?? "30000",
      TOOLSTORE_APPROVAL_TTL_MINUTES: "60",
      // Telemetry as an operator sets it (bench/telemetry.bench.ts).
      ...Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith("OTEL_"))),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  // BENCH_SERVED_LOG: a file that gets what the started server prints (e.g. with --trace-gc).
  const logFile = process.env.BENCH_SERVED_LOG;
  if (logFile) child.stdout.pipe(fs.createWriteStream(logFile));
  await new Promise<void>((resolve, reject) => {
    let seen = "";
    child.stdout.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes("ToolStore is serving")) resolve();
    });
    child.once("exit", (code) =>
      reject(new Error(`npm start exited with code ${code}: ${seen.slice(-500)}`)),
    );
  });
  const children = fs.readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim();
  const pid = Number(children.split(" ")[0]);
  return { url: `http://127.0.0.1:${port}`, keys: seeded.keys, child, pid };
}

export async function stop(served: Served) {
  if (served.child.exitCode !== null || served.child.signalCode !== null) return;
  // npm start passes SIGTERM to its serving process, and the bench server exits on it: both
  // exit cleanly, so profiles are written. One that has not exited 10 s later is killed.
  const exited = new Promise((r) => served.child.once("exit", r));
  served.child.kill("SIGTERM");
  const late = setTimeout(() => served.child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(late);
}

/** RSS, threads and CPU time of a process, from /proc (no cooperation from the process needed). */
export function procStats(pid: number): {
  rss: number;
  threads: number;
  allCpuMs: number;
  mainCpuMs: number;
} {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
  let all = 0;
  let main = 0;
  const tids = fs.readdirSync(`/proc/${pid}/task`);
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cpu = (Number(fields[11]) + Number(fields[12])) * 10;
      all += cpu;
      if (Number(tid) === pid) main = cpu;
    } catch {
      // the thread ended while being read
    }
  }
  return { rss, threads: tids.length, allCpuMs: all, mainCpuMs: main };
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
  const transport = new StreamableHTTPClientTransport(new URL(`${served.url}/api/mcp`), {
    requestInit: { headers },
  });
  await client.connect(transport);
  // The SDK's transport hands one AbortSignal to each of its fetches, and undici keeps a listener
  // on it per request until that request is collected: past 1,500 of them Node printed a leak
  // warning on every call of the bench (this client's signal, not the server's).
  const shared = (transport as unknown as { _abortController?: AbortController })._abortController;
  if (shared) setMaxListeners(0, shared.signal);
  return client;
}

async function execute(client: Client, code: string, timeoutMs = 120_000): Promise<Record<string, unknown>> {
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
  [READ_GRAPH, "20"],
  [TWENTY, "20"],
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

/** Like `load`, but each client sends calls back to back for `durationMs`. */
async function loadFor(clients: Client[], durationMs: number, code: string) {
  const samples: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const started = performance.now();
  const until = started + durationMs;
  const expected = EXPECTED.get(code);
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < until) {
        const t = performance.now();
        const r: Record<string, unknown> = await execute(client, code).catch((error) => ({
          isError: true,
          ok: false,
          error: String(error),
        }));
        samples.push(performance.now() - t);
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

interface Side {
  name: string;
  clients: Client[];
}

/** The issue's table: each cell measured on every side in turn, the order rotating each round. */
const CELLS = [
  { label: "`return 1`", code: TRIVIAL, clients: 1, goal: 1.5, by: "p50" },
  { label: "one calculator call", code: ONE_CALL, clients: 1, goal: 2, by: "p50" },
  { label: "one calculator call", code: ONE_CALL, clients: 8, goal: 0.5, by: "rps" },
  { label: "one calculator call", code: ONE_CALL, clients: 32, goal: undefined, by: "rps" },
] as const;

/** The pause before each action of the paused cells. */
const PAUSE_MS = 20;

/**
 * Agents pause between actions (for seconds, while the model thinks); the cells above send them
 * back to back. Here each action follows a pause, one client, the two sides interleaved. On a
 * 2-core VM a pause made both sides slower (floor `return 1`: 1.2 ms back to back, 3.3 ms after
 * 20 ms idle), more so for a path that hands an action across threads; no goal, a reading.
 */
async function pausedCells(pair: Side[], rounds: number): Promise<BenchRow[]> {
  const samples = new Map<string, number[]>();
  let failed = 0;
  const shapes = [
    ["`return 1`", TRIVIAL],
    ["one calculator call", ONE_CALL],
  ] as const;
  for (let round = 0; round < rounds; round++) {
    for (const [label, code] of shapes) {
      for (const side of round % 2 ? [...pair].reverse() : pair) {
        const key = `${label}:${side.name}`;
        const into = samples.get(key) ?? [];
        for (let i = 0; i < scaled(100, 10); i++) {
          await new Promise((r) => setTimeout(r, PAUSE_MS));
          const r = await load(side.clients.slice(0, 1), 1, code);
          into.push(...r.samples);
          failed += r.failures;
        }
        samples.set(key, into);
      }
    }
  }
  return shapes.map(([label]) => {
    const [ours, base] = pair.map((side) => summarize(samples.get(`${label}:${side.name}`) ?? []).p50) as [
      number,
      number,
    ];
    return {
      metric: `${label} after a ${PAUSE_MS} ms pause, 1 client: p50 ${pair.map((side) => side.name).join(" / ")}`,
      value: `${ms(ours, 1)} / ${ms(base, 1)}`,
      note: `${(ours / base).toFixed(2)}× (no goal: the path an agent that pauses between actions takes)${failed ? `; ${failed} FAILED` : ""}`,
    };
  });
}

async function latencyAndThroughput(sides: Served[], names: string[]): Promise<BenchReport[]> {
  const rounds = scaled(3, 2);
  const cellMs = scaled(3_000, 500);
  const all: Side[] = await Promise.all(
    sides.map(async (served, i) => ({
      name: names[i] as string,
      clients: await Promise.all(Array.from({ length: 32 }, () => connect(served, served.keys.a))),
    })),
  );
  // Warm every side (workers, modules, caches, the JIT), and check that each answers every measured
  // action. Both sides kept getting faster over their first thousands of actions (1 client,
  // `return 1`, interleaved: 7.9 / 3.9 ms p50 after 50, 4.4 / 1.9 ms after 3,000), so each serves
  // 2,000 before the first cell: a served product is measured as it runs, not as it starts.
  const perCode = scaled(50, 5);
  for (const code of [TRIVIAL, ONE_CALL, TWO_SEQUENTIAL, TWO_PARALLEL, FIVE_SEQUENTIAL]) {
    for (const side of all) {
      const r = await load(side.clients.slice(0, 8), perCode, code);
      if (r.failures > 0)
        throw new Error(
          `${side.name} failed ${r.failures} of ${8 * perCode} warm-up actions: ${r.firstFailure}`,
        );
    }
  }
  const result = new Map<string, { samples: number[]; seconds: number; fail: number; rounds: number[] }>();
  for (let round = 0; round < rounds; round++) {
    for (const [c, cell] of CELLS.entries()) {
      for (let k = 0; k < all.length; k++) {
        const side = all[(k + round) % all.length] as Side;
        const r = await loadFor(side.clients.slice(0, cell.clients), cellMs, cell.code);
        const key = `${c}:${side.name}`;
        const slot = result.get(key) ?? { samples: [], seconds: 0, fail: 0, rounds: [] };
        slot.samples.push(...r.samples);
        slot.rounds.push(cell.by === "p50" ? summarize(r.samples).p50 : r.samples.length / r.seconds);
        slot.seconds += r.seconds;
        slot.fail += r.failures;
        result.set(key, slot);
      }
    }
  }
  const rows: BenchRow[] = [];
  const [product, bench, floor] = names;
  for (const [c, cell] of CELLS.entries()) {
    const value = (name: string | undefined) => {
      const slot = result.get(`${c}:${name}`);
      if (!slot) return Number.NaN;
      return cell.by === "p50" ? summarize(slot.samples).p50 : slot.samples.length / slot.seconds;
    };
    const show = (v: number) => (cell.by === "p50" ? ms(v, 1) : `${v.toFixed(0)} req/s`);
    const failed = names.reduce((n, name) => n + (result.get(`${c}:${name}`)?.fail ?? 0), 0);
    const vsFloor = value(product) / value(floor);
    const agree = value(product) / value(bench);
    // The same ratio round by round (each round measures the sides one after another): how far
    // the machine's own drift moves it.
    const perRound = (result.get(`${c}:${product}`)?.rounds ?? []).map(
      (v, round) => v / (result.get(`${c}:${floor}`)?.rounds[round] ?? Number.NaN),
    );
    const spread =
      perRound.length > 1
        ? ` (rounds ${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)}×)`
        : "";
    rows.push({
      metric: `${cell.label}, ${cell.clients} client${cell.clients > 1 ? "s" : ""}: ${cell.by} ${names.join(" / ")}`,
      value: names.map((n) => show(value(n))).join(" / "),
      note:
        `${product} / ${floor} ${vsFloor.toFixed(2)}×${spread}${cell.goal ? ` (goal ${cell.by === "p50" ? "≤" : "≥"} ${cell.goal}×)` : ""}; ` +
        `${product} / ${bench} ${agree.toFixed(2)}× (goal within 10%)` +
        (cell.by === "p50"
          ? `; p99 ${names.map((n) => ms(summarize(result.get(`${c}:${n}`)?.samples ?? []).p99, 1)).join(" / ")}`
          : "") +
        (failed ? `; ${failed} FAILED` : ""),
    });
  }

  const served = names.map((n) =>
    CELLS.reduce((sum, _cell, c) => sum + (result.get(`${c}:${n}`)?.samples.length ?? 0), 0),
  );
  rows.push({
    metric: `actions measured: ${names.join(" / ")}`,
    value: served.join(" / "),
    note: `plus ${40 * perCode} warm-up actions a side (for profiles: the actions in a window)`,
  });

  // Extra capability call: one call vs two sequential vs two in Promise.all, 1 client, interleaved;
  // five sequential calls give the same cost per extra call with a quarter of the noise.
  const pair = [all[0] as Side, all[all.length - 1] as Side];
  const extra: Record<string, number[][]> = {};
  let extraFailed = 0;
  for (let round = 0; round < rounds; round++) {
    for (const [name, code] of [
      ["one", ONE_CALL],
      ["seq", TWO_SEQUENTIAL],
      ["par", TWO_PARALLEL],
      ["five", FIVE_SEQUENTIAL],
    ] as const) {
      extra[name] ??= [[], []];
      for (const [i, side] of pair.entries()) {
        const r = await loadFor(side.clients.slice(0, 1), cellMs / 2, code);
        extra[name]?.[i]?.push(...r.samples);
        extraFailed += r.failures;
      }
    }
  }
  const p50 = (shape: string, i: number) => summarize(extra[shape]?.[i] ?? []).p50;
  for (const [shape, label, extraCalls] of [
    ["seq", "sequential", 1],
    ["par", "Promise.all", 1],
    ["five", "sequential, per call of 4 more in a run of 5", 4],
  ] as const) {
    const ours = (p50(shape, 0) - p50("one", 0)) / extraCalls;
    const base = (p50(shape, 1) - p50("one", 1)) / extraCalls;
    rows.push({
      metric: `extra call (${label}): ${pair[0]?.name} / ${pair[1]?.name}`,
      value: `${ms(ours)} / ${ms(base)}`,
      note: `difference ${ms(ours - base)} (goal ≤ 1 ms)${extraFailed ? `; ${extraFailed} FAILED` : ""}`,
    });
  }
  rows.push(...(await pausedCells(pair, rounds)));
  await Promise.all(all.flatMap((side) => side.clients.map((c) => c.close())));
  return [
    {
      title: `served paths vs the floor (bare QuickJS) over MCP (${rounds} interleaved rounds × ${cellMs / 1000} s a cell)`,
      rows,
    },
  ];
}

/** The pause before each paced direct call: about an action's length. */
const PACE_MS = 5;

/** server-memory's read_graph through an action on `ours` vs a direct SDK client over stdio. */
async function mcpServerCall(ours: Served, memoryFile: string): Promise<BenchReport> {
  const client = await connect(ours, ours.keys.a);
  const direct = new Client({ name: "bench", version: "1" });
  await direct.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.resolve("node_modules/@modelcontextprotocol/server-memory/dist/index.js")],
      env: { MEMORY_FILE_PATH: memoryFile },
    }),
  );
  const samples: Record<string, number[]> = { action: [], twenty: [], direct: [], paced: [] };
  const callDirect = async () =>
    ((await direct.callTool({ name: "read_graph", arguments: {} })) as { isError?: boolean }).isError !==
    true;
  const runs: Record<string, () => Promise<boolean>> = {
    action: async () => JSON.stringify((await execute(client, READ_GRAPH)).result) === "20",
    twenty: async () => JSON.stringify((await execute(client, TWENTY)).result) === "20",
    direct: callDirect,
    // The same direct call, each after a pause as long as an action (untimed): the server's
    // threads and the CPUs it runs on have gone idle, as they have when an action's call reaches
    // it. Back to back, the direct client keeps them awake.
    paced: callDirect,
  };
  let failures = 0;
  // Warm-up, as the latency cells have theirs: the first few hundred read_graph actions run the
  // upstream call's path (SDK client, result mapping) before the JIT has compiled it, and the
  // direct client gets as many.
  const warm = scaled(300, 5);
  for (const run of Object.values(runs)) for (let i = 0; i < warm; i++) await run();
  const perRound = scaled(40, 5);
  for (let round = 0; round < scaled(6, 2); round++) {
    const order = Object.keys(runs);
    if (round % 2 === 1) order.reverse();
    for (const name of order) {
      for (let i = 0; i < perRound; i++) {
        if (name === "paced") await new Promise((r) => setTimeout(r, PACE_MS));
        const t = performance.now();
        if (!(await (runs[name] as () => Promise<boolean>)())) failures += 1;
        samples[name]?.push(performance.now() - t);
      }
    }
  }
  await client.close();
  await direct.close();
  const [a, t, d, p] = (["action", "twenty", "direct", "paced"] as const).map(
    (k) => summarize(samples[k] ?? []).p50,
  ) as [number, number, number, number];
  return {
    title: "an MCP-server call through an action: server-memory read_graph (20 entities), 1 client",
    rows: [
      { metric: "execute_code with read_graph: p50", value: ms(a), note: `${failures} failed` },
      { metric: "direct SDK client call over stdio: p50", value: ms(d) },
      { metric: "difference", value: ms(a - d), note: "goal ≤ 3 ms" },
      {
        metric: "for scale: execute_code `return 20` p50; the call's own share",
        value: `${ms(t)}; ${ms(a - t)}`,
        note: `the read_graph call costs ${ms(a - t - d)} more through the action than directly`,
      },
      {
        metric: `direct SDK call after a ${PACE_MS} ms pause (untimed): p50`,
        value: ms(p),
        note: `the call's own share above it: ${ms(a - t - p)} (the pause lets the server's threads go idle, as between an action's calls; no goal)`,
      },
    ],
  };
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

/**
 * `url` fetched every `everyMs` for `seconds` from a process of its own, as a browser would: its
 * times in ms. Timed from the bench process, a page also waited for that process's event loop,
 * which serves the 200 MCP clients. (On this 2-core machine the two ways agreed within 10%, in
 * separate runs: `GET /signin` p50 / p99 106 / 300 ms from the bench, 101 / 290 ms from a process
 * of its own.)
 */
function probePage(url: string, seconds: number, everyMs = 100): Promise<number[]> {
  const script = `const until = performance.now() + ${seconds * 1000}; const out = [];
while (performance.now() < until) {
  const t = performance.now();
  await (await fetch(${JSON.stringify(url)})).text();
  out.push(performance.now() - t);
  await new Promise((r) => setTimeout(r, ${everyMs}));
}
process.stdout.write(JSON.stringify(out));`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let text = "";
  child.stdout.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    // "close", not "exit": the child's last output can still be in the pipe when it exits.
    child.once("close", (code) => {
      if (code === 0) resolve(JSON.parse(text) as number[]);
      else reject(new Error(`the page probe for ${url} exited with code ${code}`));
    });
  });
}

/**
 * The acceptance check on memory as started: `n` MCP clients for `seconds` against the `npm start`
 * process, its RSS (from /proc, no forced GC) sampled throughout and 30 s after the load.
 */
async function manyClients(ours: Served, started: ReturnType<typeof procStats>): Promise<BenchReport> {
  const pid = ours.pid as number;
  const n = scaled(200, 10);
  const seconds = scaled(60, 5);
  const settleS = scaled(30, 5);
  const idle = procStats(pid);
  const clients = await Promise.all(Array.from({ length: n }, () => connect(ours, ours.keys.a)));
  const samples: number[] = [];
  const pageSamples: number[] = [];
  let failures = 0;
  let peak = idle.rss;
  let peakThreads = idle.threads;
  const until = performance.now() + seconds * 1000;
  const sampler = setInterval(() => {
    const now = procStats(pid);
    peak = Math.max(peak, now.rss);
    peakThreads = Math.max(peakThreads, now.threads);
  }, 250);
  const page = probePage(`${ours.url}/signin`, seconds).then((samples) => pageSamples.push(...samples));
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
  clearInterval(sampler);
  const end = procStats(pid);
  await new Promise((r) => setTimeout(r, settleS * 1000));
  const settled = procStats(pid);
  const s = summarize(samples);
  const p = summarize(pageSamples);
  return {
    title: `${n} concurrent MCP clients for ${seconds} s against the \`npm start\` process`,
    rows: [
      {
        metric: "execute_code p50 / p99",
        value: `${ms(s.p50)} / ${ms(s.p99)}`,
        note: `p99/p50 ${ratio(s.p99, s.p50)} (goal ≤ 10×); ${samples.length} calls (${(samples.length / seconds).toFixed(0)}/s), ${failures} failed`,
      },
      {
        metric: "GET /signin p50 / p99",
        value: `${ms(p.p50)} / ${ms(p.p99)}`,
        note: `goal p99 < 200 ms; timed from a process of its own, every 100 ms (${pageSamples.length} pages)`,
      },
      {
        metric: "RSS just started / idle before the load",
        value: `${mib(started.rss)} / ${mib(idle.rss)}`,
        note: `${idle.threads} threads; idle is after the sections before this one (their actions), and the goals below are read against it (a process that has served keeps its sandbox workers and warm modules); each row also gives the ratio to just started`,
      },
      {
        metric: "RSS peak during the load",
        value: mib(peak),
        note: `${ratio(peak, idle.rss)} of idle (goal < 2×), ${ratio(peak, started.rss)} of just started; ${peakThreads} threads at most`,
      },
      {
        metric: "RSS right after the load",
        value: mib(end.rss),
        note: `${ratio(end.rss, idle.rss)} of idle, ${ratio(end.rss, started.rss)} of just started`,
      },
      {
        metric: `RSS ${settleS} s after the load`,
        value: mib(settled.rss),
        note: `${ratio(settled.rss, idle.rss)} of idle (goal ≤ 1.2×), ${ratio(settled.rss, started.rss)} of just started; ${settled.threads} threads`,
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

/** Fresh databases, one per name: SQLite files in `dir`, or PostgreSQL databases beside `pg`'s. */
export async function benchDatabases(
  dir: string,
  pg: string | undefined,
  names: string[],
): Promise<string[]> {
  if (!pg) return names.map((name) => `file:${path.join(dir, `${name}.db`)}`);
  const { default: pgLib } = await import("pg");
  const admin = new pgLib.Client({ connectionString: pg });
  await admin.connect();
  const urls: string[] = [];
  for (const name of names.map((n) => `toolstore_bench_${n}`)) {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(pg);
    url.pathname = `/${name}`;
    urls.push(url.toString());
  }
  await admin.end();
  return urls;
}

async function servedPath(): Promise<BenchReport[]> {
  const pgUrl = process.env.BENCH_DATABASE_URL?.startsWith("postgres")
    ? process.env.BENCH_DATABASE_URL
    : undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-bench-served-"));
  const memoryFile = path.join(dir, "memory.jsonl");
  writeMemoryGraph(memoryFile);
  const [productUrl = "", servedUrl = ""] = await benchDatabases(dir, pgUrl, ["product", "served"]);
  const common = { BENCH_ACTION_TIMEOUT_MS: String(DEADLINE_MS), BENCH_MEMORY_FILE: memoryFile };
  const only = process.env.BENCH_SERVED_ONLY?.split(",");
  const want = (name: string) => !only || only.includes(name);
  const reports: BenchReport[] = [];
  const product = await startProduct(
    { ...common, BENCH_DATABASE_URL: productUrl },
    Number(process.env.BENCH_SERVED_PORT ?? 3391),
  );
  const productStarted = procStats(product.pid as number);
  const ours = await startServed("toolstore", { ...common, BENCH_DATABASE_URL: servedUrl });
  const floor = await startServed("baseline", {});
  const parse = process.env.BENCH_SERVED_PARSE === "1" ? await startServed("baseline-parse", {}) : undefined;
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
    await section("latency", () =>
      latencyAndThroughput(parse ? [product, ours, floor, parse] : [product, ours, floor], [
        "npm start",
        "bench server",
        "floor",
        ...(parse ? ["bare, module parsed per action"] : []),
      ]),
    );
    await stop(floor);
    if (parse) await stop(parse);
    await section("mcp-call", () => mcpServerCall(product, memoryFile));
    await section("clients", () => manyClients(product, productStarted));
    await stop(product);
    await section("memory", () => memoryAfterActions(ours));
    await section("fairness", () => fairness(ours));
    await section("parked", () => parkedApprovals(ours));
    if (!pgUrl) await section("locked", () => lockedDatabase(ours, servedUrl.slice("file:".length)));
  } finally {
    await stop(product);
    await stop(ours);
    await stop(floor);
    if (parse) await stop(parse);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const machine = `${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)} at the end, shared machine; scale ${SCALE}; ${pgUrl ? "PostgreSQL" : "SQLite"}`;
  for (const r of reports) r.title = `${r.title} [${machine}]`;
  return reports;
}

export const benchmarks: Benchmark[] = [
  { name: "served: the MCP path as served vs bare QuickJS", run: servedPath },
];
