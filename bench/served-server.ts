/**
 * A served process for bench/served.bench.ts, started as its own Node process (so RSS, the event
 * loop and the database lock are its own). Two flavours, chosen by argv[2]:
 * - `toolstore`: the real MCP HTTP handler (API keys, DB sessions, gate, sandbox pool, audit) over
 *   node:http, on a real SQLite file (or PostgreSQL when BENCH_DATABASE_URL is postgresql://), with
 *   the toolsets folder loaded, plus a static `GET /` page;
 * - `baseline`: a minimal MCP SDK server whose `execute_code` tool runs the same action code in a
 *   bare fresh QuickJS runtime (the calculator toolset's code loaded as a module beside it).
 * Both answer `GET /__bench/stats?gc=1` with RSS after a forced GC (run with --expose-gc), the
 * event-loop lag since the previous `reset=1`, and (toolstore) the pool's stats. On start they
 * print one JSON line `{ "url", "keys" }` on stdout.
 */
import fs from "node:fs";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { QuickJSHandle, QuickJSWASMModule } from "quickjs-emscripten-core";
import { z } from "zod";
import { loadCappedQuickJS } from "../server/core/sandbox/quickjs-module";
import { transpileToolset } from "../server/core/toolsets/compile-toolset";
import { serveFetchHandler } from "../server/mcp/node-adapter";

type FetchHandler = (req: Request) => Promise<Response>;

/**
 * CPU time of this process in ms: the main thread's and all threads' (workers included), read per
 * thread from /proc (CPU time, so it is not inflated by a loaded machine as wall time is).
 */
function cpuTimes(): { mainCpuMs: number; allCpuMs: number; processCpuMs: number } {
  // getrusage: every thread's time, including threads that have exited (retired workers).
  const usage = process.cpuUsage();
  return { ...threadCpuTimes(), processCpuMs: (usage.user + usage.system) / 1000 };
}

function threadCpuTimes(): { mainCpuMs: number; allCpuMs: number } {
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
): Promise<{ url: string }> {
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const json = (body: unknown) =>
    new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
  const route: FetchHandler = async (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/" && req.method === "GET") {
      return new Response(STATIC_PAGE, { headers: { "content-type": "text/html" } });
    }
    if (url.pathname === "/__bench/stats") {
      // Read before a forced GC, which stops the event loop itself and would show as lag.
      const lagP99Ms = lag.percentile(99) / 1e6;
      const lagMaxMs = lag.max / 1e6;
      if (url.searchParams.get("gc") === "1") {
        const gc = (globalThis as { gc?: () => void }).gc;
        for (let i = 0; i < 3; i++) gc?.();
        await new Promise((r) => setTimeout(r, 50));
        gc?.();
      }
      const body = {
        rss: process.memoryUsage().rss,
        heapUsed: process.memoryUsage().heapUsed,
        lagP99Ms,
        lagMaxMs,
        ...cpuTimes(),
        ...(await stats()),
      };
      if (url.searchParams.get("reset") === "1") lag.reset();
      return json(body);
    }
    if (url.pathname === "/api/mcp") return mcp(req);
    return new Response(null, { status: 404 });
  };
  return serveFetchHandler(route, null);
}

async function startToolStore() {
  const { createDb } = await import("../server/db");
  const { deployMigrations } = await import("../server/db/migrate");
  const { parseDatabaseUrl } = await import("../server/db/provider");
  const { createMcpHttpHandler } = await import("../server/mcp/http");
  const { createApiKey } = await import("../server/services/api-keys");
  const { startServerEngine } = await import("../server/engine");
  const { createMcpBackend } = await import("../server/mcp/mcp-backend");
  const { syncToolsetsFolder } = await import("../server/modules/toolsets");

  const { processTelemetry } = await import("../server/infra/telemetry-setup");
  // As `npm start` does: metrics always, traces when OTEL_EXPORTER_OTLP_ENDPOINT is set.
  processTelemetry();

  const target = parseDatabaseUrl(process.env.BENCH_DATABASE_URL ?? "");
  await deployMigrations(target);
  const db = createDb(target);
  const user = await db.user.create({
    data: { username: `bench-${Date.now()}`, displayName: "Bench", role: "admin", passwordHash: "x" },
  });
  await syncToolsetsFolder(db, path.resolve("toolsets"));
  const engine = await startServerEngine({
    db,
    actionTimeoutMs: Number(process.env.BENCH_ACTION_TIMEOUT_MS ?? 30_000),
    approvalTtlMs: 60 * 60_000,
  });
  const backend = createMcpBackend({ db, engine: async () => engine, publicUrl: "http://bench" });
  const handler = createMcpHttpHandler({
    db,
    backend,
    consoleUrl: "http://bench",
    allowedOrigins: [],
    rateLimitPerMinute: 100_000_000,
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
  const { url } = await serve(handler, async () => ({
    pool: engine.pool.stats(),
    pendingApprovals: await db.approval.count({ where: { status: "pending" } }),
  }));
  return { url, keys };
}

const CALCULATOR = transpileToolset(fs.readFileSync(path.resolve("toolsets/calculator/toolset.ts"), "utf8"));
const CALCULATOR_FACADE = `import { evaluate as e, statistics as s } from "calculator-impl";
export const evaluate = async (a) => e(a.expression, a.variables, a.precision);
export const statistics = async (a) => s(a.values);`;

/** Runs one action in a fresh runtime and context: the floor that the served path is compared to. */
function runBare(module: QuickJSWASMModule, code: string): unknown {
  const rt = module.newRuntime();
  rt.setMaxStackSize(256 * 1024);
  rt.setMemoryLimit(64 * 1024 * 1024);
  rt.setModuleLoader(
    (name) =>
      name === "toolstore/calculator" ? CALCULATOR_FACADE : name === "calculator-impl" ? CALCULATOR : code,
    (_base, requested) => requested,
  );
  const ctx = rt.newContext();
  try {
    const ns = ctx.unwrapResult(ctx.evalCode(`import("action.js")`, "driver.js", { type: "global" }));
    rt.executePendingJobs();
    const nsState = ctx.getPromiseState(ns);
    ns.dispose();
    if (nsState.type !== "fulfilled") {
      let why = "";
      if (nsState.type === "rejected") {
        why = JSON.stringify(ctx.dump(nsState.error));
        nsState.error.dispose();
      }
      throw new Error(`bare: module did not load ${why}`);
    }
    const main = ctx.getProp(nsState.value, "default");
    nsState.value.dispose();
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

async function startBaseline() {
  const { module } = await loadCappedQuickJS(256 * 1024 * 1024);
  const handler: FetchHandler = async (req) => {
    const server = new McpServer({ name: "bare-quickjs", version: "1" });
    server.registerTool(
      "execute_code",
      { description: "runs an action in bare QuickJS", inputSchema: { code: z.string() } },
      async ({ code }) => {
        try {
          const result = runBare(module, code);
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
const started = flavour === "baseline" ? await startBaseline() : await startToolStore();
process.stdout.write(`${JSON.stringify(started)}\n`);
