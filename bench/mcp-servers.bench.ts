/**
 * Benchmark: an action calling server-memory's `read_graph` through ToolStore (the
 * served engine over SQLite: sandbox, registry, snapshot, gate, audit, the upstream stdio call)
 * against the same `tools/call` made directly by an SDK client to the same server binary (its own
 * process, same memory file). Interleaved rounds; medians and their ratio. Never fails on a number.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { testSession } from "../server/core/testing/fixtures";
import { createDb } from "../server/db";
import { deployMigrations } from "../server/db/migrate";
import { startServerEngine } from "../server/engine";
import { categorizeTools, parseCategorizeRule, saveServer } from "../server/modules/mcp-servers";
import { type Benchmark, type BenchReport, ms, summarize, writeMemoryGraph } from "./harness";

const ROUNDS = 10;
const PER_ROUND = 20;
const BIN = path.resolve(
  import.meta.dirname,
  "../node_modules/@modelcontextprotocol/server-memory/dist/index.js",
);

async function measure(): Promise<BenchReport> {
  const dir = mkdtempSync(path.join(tmpdir(), "toolstore-bench-mcp-"));
  const memoryFile = path.join(dir, "memory.jsonl");
  // A small graph so read_graph returns real data.
  writeMemoryGraph(memoryFile);
  const target = { provider: "sqlite" as const, url: path.join(dir, "bench.db") };
  await deployMigrations(target);
  const db = createDb(target);
  const engine = await startServerEngine({ db, workers: 1, instanceId: "bench-mcp" });
  const direct = new Client({ name: "bench", version: "1" });
  try {
    await saveServer(db, {
      name: "memory",
      transport: "stdio",
      command: process.execPath,
      args: [BIN],
      env: { MEMORY_FILE_PATH: memoryFile },
    });
    await engine.sources.mcp.source.refresh("memory");
    await categorizeTools(db, "memory", [parseCategorizeRule("*=proposed")], null);
    engine.registry.invalidate();

    await direct.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN],
        env: { MEMORY_FILE_PATH: memoryFile },
      }),
    );
    const session = testSession({ id: "bench-mcp", mode: "default" });
    const code = `import { read_graph } from "toolstore/memory"; export default async () => (await read_graph({})).entities.length;`;
    const viaToolStore = async () => {
      const { envelope } = await engine.run({ code, session });
      if (!envelope.ok || envelope.result !== 20)
        throw new Error(`action failed: ${JSON.stringify(envelope.error)}`);
    };
    const empty = `export default async () => 20;`;
    const emptyAction = async () => {
      const { envelope } = await engine.run({ code: empty, session });
      if (!envelope.ok) throw new Error("empty action failed");
    };
    const direct_ = async () => {
      const { value } = await engine.invoke({ session, name: "memory.read_graph", args: {} });
      if (!value) throw new Error("direct invoke failed");
    };
    const viaSdk = async () => {
      const r = await direct.callTool({ name: "read_graph", arguments: {} });
      if (r.isError) throw new Error("direct call failed");
    };
    for (let i = 0; i < 10; i++) {
      await viaToolStore();
      await viaSdk();
    }
    const toolstore: number[] = [];
    const sdk: number[] = [];
    const floor: number[] = [];
    const invoked: number[] = [];
    const time = async (fn: () => Promise<void>, into: number[]) => {
      for (let i = 0; i < PER_ROUND; i++) {
        const t = performance.now();
        await fn();
        into.push(performance.now() - t);
      }
    };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which path goes first, so drift on a shared machine hits both.
      const order: [() => Promise<void>, number[]][] = [
        [viaToolStore, toolstore],
        [viaSdk, sdk],
        [emptyAction, floor],
        [direct_, invoked],
      ];
      if (round % 2 === 1) order.reverse();
      for (const [fn, into] of order) await time(fn, into);
    }
    const a = summarize(toolstore);
    const b = summarize(sdk);
    const f = summarize(floor);
    const g = summarize(invoked);
    return {
      title: `MCP server call: server-memory read_graph, ${ROUNDS} interleaved rounds x ${PER_ROUND} calls per path`,
      rows: [
        {
          metric: "action through ToolStore (p50)",
          value: ms(a.p50),
          note: `p95 ${ms(a.p95)}; sandbox + gate + audit + upstream call`,
        },
        {
          metric: "direct SDK client (p50)",
          value: ms(b.p50),
          note: `p95 ${ms(b.p95)}; the same server binary over stdio`,
        },
        {
          metric: "ratio ToolStore / direct",
          value: `${(a.p50 / b.p50).toFixed(1)}x`,
          note: "MCP server call overhead",
        },
        { metric: "added per call (p50)", value: ms(a.p50 - b.p50) },
        {
          metric: "for scale: empty action, no call (p50)",
          value: ms(f.p50),
          note: `p95 ${ms(f.p95)}; the action's own cost (sandbox, run row, envelope)`,
        },
        {
          metric: "for scale: gated direct call, no sandbox (p50)",
          value: ms(g.p50),
          note: `p95 ${ms(g.p95)}; engine.invoke: registry, snapshot, gate, audit, upstream call`,
        },
      ],
    };
  } finally {
    await direct.close().catch(() => undefined);
    await engine.shutdown();
    await db.$disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmarks: Benchmark[] = [{ name: "mcp-server-call", run: measure }];
