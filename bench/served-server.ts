/**
 * A served process for bench/served.bench.ts, started as its own Node process (so RSS, the event
 * loop and the database lock are its own). The flavour is the last argument:
 * - `toolstore`: the real MCP HTTP handler (API keys, DB sessions, gate, sandbox pool, audit) behind
 *   the front server `npm start` uses, on a real SQLite file (or PostgreSQL when BENCH_DATABASE_URL
 *   is postgresql://), with the toolsets folder loaded, plus a static `GET /` page and the
 *   console's tRPC `approvals.decide` (POST /api/trpc/approvals.decide with a session cookie);
 * - `baseline`: the floor, a minimal MCP SDK server whose `execute_code` tool runs the same action
 *   in a fresh QuickJS runtime and context, with the calculator toolset evaluated once in a warm
 *   runtime of its own and reached through a host function;
 * - `baseline-parse`: as `baseline`, but the calculator's source is loaded inside every action;
 * - `seed`: migrates BENCH_DATABASE_URL, adds the bench's user, keys and the server-memory MCP
 *   server, prints `{ "keys" }` and exits (the database `npm start` then serves).
 * Both answer `GET /__bench/stats?gc=1` with RSS after a forced GC (run with --expose-gc), the
 * event-loop lag since the previous `reset=1`, and (toolstore) the pool's stats. On start they
 * print one JSON line `{ "url", "keys" }` on stdout.
 */
import fs from "node:fs";
import { Session } from "node:inspector";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from "quickjs-emscripten-core";
import { z } from "zod";
import { loadCappedQuickJS } from "../server/core/sandbox/quickjs-module";
import { transpileToolset } from "../server/core/toolsets/compile-toolset";
import { loadEnv } from "../server/env";
import { createFrontServer, MCP_PATH, mcpAdmission } from "../server/http/front-server";
import { createRequestGuard, type RequestGuard } from "../server/http/request-guard";

type FetchHandler = (req: Request) => Promise<Response>;

/**
 * CPU time of this process in ms: the main thread's and all threads' (workers included), read per
 * thread from /proc (CPU time, so it is not inflated by a loaded machine as wall time is).
 */
function cpuTimes(): { mainCpuMs: number; allCpuMs: number } {
  const tick = 10; // USER_HZ is 100 on Linux
  try {
    let all = 0;
    let main = 0;
    for (const tid of fs.readdirSync("/proc/self/task")) {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ms = (Number(fields[11]) + Number(fields[12])) * tick;
      all += ms;
      if (Number(tid) === process.pid) main = ms;
    }
    return { mainCpuMs: main, allCpuMs: all };
  } catch {
    const u = process.cpuUsage();
    return { mainCpuMs: Number.NaN, allCpuMs: (u.user + u.system) / 1000 };
  }
}

const STATIC_PAGE = `<!doctype html><html><head><title>ToolStore</title></head><body><h1>ToolStore</h1></body></html>`;

/** Serves `mcp` at /api/mcp, the static page at / and the stats at /__bench/stats on loopback. */
async function serve(
  mcp: FetchHandler,
  stats: () => Promise<Record<string, unknown>>,
  guard: RequestGuard = createRequestGuard({}),
  extraRoutes: Record<string, FetchHandler> = {},
  /** The MCP handler reads its body with readBodyText, as ToolStore's does (scripts/serve.ts). */
  mcpBodyAside = false,
): Promise<{ url: string }> {
  /** /proc/self/smaps_rollup's resident figures, in bytes (Linux). */
  const smapsRollup = () => {
    const out: Record<string, number> = {};
    try {
      const text = fs.readFileSync("/proc/self/smaps_rollup", "utf8");
      for (const [, name, kb] of text.matchAll(/^(Anonymous|RssFile|RssShmem|Rss):\s+(\d+) kB/gm))
        out[name as string] = Number(kb) * 1024;
    } catch {
      // not Linux
    }
    return out;
  };
  // Allocation sampling of the main thread (V8's sampling heap profiler, objects collected by
  // either GC included): `?start`, then `?stop` answers the profile (what a run allocates, by stack).
  const inspector = new Session();
  inspector.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      inspector.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  const allocRoute: FetchHandler = async (req) => {
    const url = new URL(req.url);
    if (url.searchParams.has("start")) {
      await post("HeapProfiler.enable");
      await post("HeapProfiler.startSampling", {
        samplingInterval: 1024,
        includeObjectsCollectedByMajorGC: true,
        // `?start&survivors`: only objects that outlived a scavenge (what the old generation gets).
        includeObjectsCollectedByMinorGC: !url.searchParams.has("survivors"),
      });
      return json({ ok: true });
    }
    return json(await post("HeapProfiler.stopSampling"));
  };
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const json = (body: unknown) =>
    new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
  const page: FetchHandler = async () =>
    new Response(STATIC_PAGE, { headers: { "content-type": "text/html" } });
  const statsRoute: FetchHandler = async (req) => {
    const url = new URL(req.url);
    // Read before a forced GC, which stops the event loop itself and would show as lag.
    const lagP99Ms = lag.percentile(99) / 1e6;
    const lagMaxMs = lag.max / 1e6;
    if (url.searchParams.get("gc") === "1") {
      const gc = (globalThis as { gc?: () => void }).gc;
      for (let i = 0; i < 3; i++) gc?.();
      await new Promise((r) => setTimeout(r, 50));
      gc?.();
    }
    const memory = process.memoryUsage();
    const body = {
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      // Where the RSS is: the main thread's V8 heap (committed) and its buffers outside it (the
      // workers' heaps and QuickJS memories are not in these), and the kernel's split of the
      // process's resident pages (anonymous vs file-backed).
      heapTotal: memory.heapTotal,
      external: memory.external,
      arrayBuffers: memory.arrayBuffers,
      smaps: smapsRollup(),
      lagP99Ms,
      lagMaxMs,
      ...cpuTimes(),
      // getrusage: every thread's time, including threads that have exited (retired workers).
      processCpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
      ...(await stats()),
    };
    if (url.searchParams.get("reset") === "1") lag.reset();
    return json(body);
  };
  // The same front server as `npm start` (scripts/serve.ts); what it would pass to Next gets 404.
  const server = createFrontServer({
    guard,
    routes: {
      [MCP_PATH]: () => mcp,
      "/": () => page,
      "/__bench/stats": () => statsRoute,
      "/__bench/alloc": () => allocRoute,
      ...Object.fromEntries(Object.entries(extraRoutes).map(([p, h]) => [p, () => h])),
    },
    fallback: (_req, res) => res.writeHead(404).end(),
    ...(mcpBodyAside ? { bodyAside: new Set([MCP_PATH]) } : {}),
    ...mcpAdmission(loadEnv().TOOLSTORE_MCP_CONCURRENCY),
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The bench's users, keys and the server-memory MCP server, in a migrated database. */
async function seed(url: string, memoryFile: string): Promise<Record<string, string>> {
  const { createDb } = await import("../server/db");
  const { deployMigrations } = await import("../server/db/migrate");
  const { parseDatabaseUrl } = await import("../server/db/provider");
  const { createApiKey } = await import("../server/services/api-keys");
  const { startServerEngine } = await import("../server/engine");
  const { categorizeTools, parseCategorizeRule, saveServer } = await import("../server/modules/mcp-servers");
  const target = parseDatabaseUrl(url);
  await deployMigrations(target);
  const db = createDb(target);
  const user = await db.user.create({
    data: { username: `bench-${Date.now()}`, displayName: "Bench", role: "admin", passwordHash: "x" },
  });
  const keys: Record<string, string> = {};
  for (const [name, mode] of [
    ["a", "auto"],
    ["b", "auto"],
    ["loops", "auto"],
    ["parked", "default"],
  ] as const) {
    keys[name] = (await createApiKey(db, user.id, { name: `bench-${name}`, mode })).key;
  }
  await saveServer(db, {
    name: "memory",
    transport: "stdio",
    command: process.execPath,
    args: [path.resolve("node_modules/@modelcontextprotocol/server-memory/dist/index.js")],
    env: { MEMORY_FILE_PATH: memoryFile },
  });
  const engine = await startServerEngine({ db, workers: 1, instanceId: `bench-seed-${Date.now()}` });
  await engine.sources.mcp.source.refresh("memory");
  await categorizeTools(db, "memory", [parseCategorizeRule("*=proposed")], null);
  await engine.shutdown();
  await db.$disconnect();
  return keys;
}

/**
 * ToolStore's real MCP HTTP handler (API keys, DB sessions, gate, sandbox pool, audit) composed as
 * `npm start` composes it (server/mcp/mount.ts, the engine with the settings from the
 * environment) behind the same front server, without Next.js for the rest.
 */

async function startToolStore() {
  const url = process.env.BENCH_DATABASE_URL ?? "";
  const keys = await seed(url, process.env.BENCH_MEMORY_FILE ?? "");
  // What the bench passes to `npm start` as well (bench/served.bench.ts, startProduct).
  Object.assign(process.env, {
    DATABASE_URL: url,
    HOST: "127.0.0.1",
    TOOLSTORE_MCP_RATE_LIMIT: "100000000",
    TOOLSTORE_ACTION_TIMEOUT_MS: process.env.BENCH_ACTION_TIMEOUT_MS ?? "30000",
    TOOLSTORE_APPROVAL_TTL_MINUTES: "60",
  });
  const { getDb } = await import("../server/db");
  const { getEngine } = await import("../server/engine");
  const { getMcpHttpHandler } = await import("../server/mcp/mount");
  const { SOURCE_PLUGINS } = await import("../server/modules");
  const { getRequestGuard } = await import("../server/http/request-guard");
  const { secretBoxFor } = await import("../server/services/stored-secrets");
  const db = getDb();
  // As scripts/start.ts prepares the database before it serves.
  await secretBoxFor(db);
  for (const plugin of SOURCE_PLUGINS) {
    if ("loadAtStart" in plugin && plugin.loadAtStart) {
      await plugin.loadAtStart(db, { root: path.resolve("."), log: () => {} });
    }
  }
  const engine = await getEngine();
  // The console's tRPC handler (as app/api/trpc/[trpc]/route.ts builds it) for the one procedure a
  // human approver uses (bench/durable.bench.ts approves through it with a console session).
  const { fetchRequestHandler } = await import("@trpc/server/adapters/fetch");
  const { appRouter } = await import("../server/api/root");
  const { createContext } = await import("../server/api/trpc");
  const trpc: FetchHandler = (req) =>
    fetchRequestHandler({ endpoint: "/api/trpc", req, router: appRouter, createContext });
  const served = await serve(
    getMcpHttpHandler(),
    async () => ({
      pool: engine.pool.stats(),
      pendingApprovals: await db.approval.count({ where: { status: "pending" } }),
    }),
    getRequestGuard(),
    { "/api/trpc/approvals.decide": trpc },
    true,
  );
  // As scripts/serve.ts does once it serves. BENCH_IDLE_GC_QUIET_MS: another quiet window (four
  // looks), for an interleaved A/B against npm start's default.
  const { startIdleGc } = await import("../server/infra/idle-gc");
  const quietMs = Number(process.env.BENCH_IDLE_GC_QUIET_MS);
  startIdleGc(quietMs > 0 ? { everyMs: quietMs / 4, quietChecks: 4 } : {});
  return { url: served.url, keys };
}

const CALCULATOR = transpileToolset(fs.readFileSync(path.resolve("toolsets/calculator/toolset.ts"), "utf8"));
const CALCULATOR_FACADE = `import { evaluate as e, statistics as s } from "calculator-impl";
export const evaluate = async (a) => e(a.expression, a.variables, a.precision);
export const statistics = async (a) => s(a.values);`;

const FLOOR_FACADE = `export const evaluate = async (a) => JSON.parse(__call("evaluate", JSON.stringify(a)));
export const statistics = async (a) => JSON.parse(__call("statistics", JSON.stringify(a)));`;
const WARM_ENTRY = `import { evaluate, statistics } from "calculator-impl";
globalThis.__run = (name, json) => {
  const a = JSON.parse(json);
  return JSON.stringify(name === "evaluate" ? evaluate(a.expression, a.variables, a.precision) : statistics(a.values));
};`;

/** Loads `entry` as an ES module in `ctx` and answers its namespace (the caller disposes it). */
function importModule(rt: QuickJSRuntime, ctx: QuickJSContext, entry: string): QuickJSHandle {
  const ns = ctx.unwrapResult(
    ctx.evalCode(`import(${JSON.stringify(entry)})`, "driver.js", { type: "global" }),
  );
  rt.executePendingJobs();
  const state = ctx.getPromiseState(ns);
  ns.dispose();
  if (state.type === "fulfilled") return state.value;
  let why = "";
  if (state.type === "rejected") {
    why = JSON.stringify(ctx.dump(state.error));
    state.error.dispose();
  }
  throw new Error(`bare: module did not load ${why}`);
}

/**
 * The calculator toolset evaluated once in a runtime of its own that outlives the actions, as
 * ToolStore's warm binding contexts do: a call costs the function, not a parse of 22 KiB.
 */
function warmCalculator(module: QuickJSWASMModule): (name: string, json: string) => string {
  const rt = module.newRuntime();
  rt.setMaxStackSize(256 * 1024);
  rt.setMemoryLimit(64 * 1024 * 1024);
  rt.setModuleLoader(
    (name) => (name === "calculator-impl" ? CALCULATOR : WARM_ENTRY),
    (_base, requested) => requested,
  );
  const ctx = rt.newContext();
  importModule(rt, ctx, "warm.js").dispose();
  const run = ctx.getProp(ctx.global, "__run");
  return (name, json) => {
    const args = [ctx.newString(name), ctx.newString(json)];
    const text = ctx.unwrapResult(ctx.callFunction(run, ctx.undefined, ...args));
    for (const a of args) a.dispose();
    const out = ctx.getString(text);
    text.dispose();
    return out;
  };
}

/**
 * Runs one action in a fresh runtime and context, the least work that gives ToolStore's answer:
 * `parse` loads the calculator's source as a module inside the action (the old baseline); else
 * the facade answers through a host function into the warm calculator (the floor).
 */
function runBare(
  module: QuickJSWASMModule,
  code: string,
  calculator: ((name: string, json: string) => string) | null,
): unknown {
  const rt = module.newRuntime();
  rt.setMaxStackSize(256 * 1024);
  rt.setMemoryLimit(64 * 1024 * 1024);
  rt.setModuleLoader(
    (name) =>
      name === "toolstore/calculator"
        ? calculator
          ? FLOOR_FACADE
          : CALCULATOR_FACADE
        : name === "calculator-impl"
          ? CALCULATOR
          : code,
    (_base, requested) => requested,
  );
  const ctx = rt.newContext();
  try {
    if (calculator) {
      const call = ctx.newFunction("__call", (name, json) =>
        ctx.newString(calculator(ctx.getString(name), ctx.getString(json))),
      );
      ctx.setProp(ctx.global, "__call", call);
      call.dispose();
    }
    const ns = importModule(rt, ctx, "action.js");
    const main = ctx.getProp(ns, "default");
    ns.dispose();
    const promise = ctx.unwrapResult(ctx.callFunction(main, ctx.undefined));
    main.dispose();
    rt.executePendingJobs();
    const state = ctx.getPromiseState(promise);
    promise.dispose();
    if (state.type === "pending") throw new Error("bare: action did not settle");
    if (state.type === "rejected") {
      const message = ctx.dump(state.error);
      throw new Error(`bare: action threw ${JSON.stringify(message)}`);
    }
    const json = ctx.getProp(ctx.global, "JSON");
    const stringify = ctx.getProp(json, "stringify");
    const text = ctx.unwrapResult(ctx.callFunction(stringify, json, state.value as QuickJSHandle));
    const result = JSON.parse(ctx.getString(text));
    for (const h of [text, stringify, json, state.value]) h.dispose();
    return result;
  } finally {
    ctx.dispose();
    rt.dispose();
  }
}

async function startBaseline(parse: boolean) {
  const { module } = await loadCappedQuickJS(256 * 1024 * 1024);
  const calculator = parse ? null : warmCalculator(module);
  const handler: FetchHandler = async (req) => {
    const server = new McpServer({ name: "bare-quickjs", version: "1" });
    server.registerTool(
      "execute_code",
      { description: "runs an action in bare QuickJS", inputSchema: { code: z.string() } },
      async ({ code }) => {
        try {
          const result = runBare(module, code, calculator);
          return { content: [{ type: "text", text: JSON.stringify({ ok: true, result }) }] };
        } catch (error) {
          return { content: [{ type: "text", text: String(error) }], isError: true };
        }
      },
    );
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    return transport.handleRequest(req);
  };
  const { url } = await serve(handler, async () => ({}));
  return { url, keys: {} };
}

const flavour = process.argv.at(-1);
// SIGTERM ends the process through exit, so a `--cpu-prof` profile is written.
process.once("SIGTERM", () => process.exit(0));
const started =
  flavour === "seed"
    ? { keys: await seed(process.env.BENCH_DATABASE_URL ?? "", process.env.BENCH_MEMORY_FILE ?? "") }
    : flavour === "baseline" || flavour === "baseline-parse"
      ? await startBaseline(flavour === "baseline-parse")
      : await startToolStore();
process.stdout.write(`${JSON.stringify(started)}\n`, () => {
  if (flavour === "seed") process.exit(0);
});
