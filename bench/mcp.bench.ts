/**
 * MCP throughput over loopback: `execute_code` (an action calling a read capability, through the
 * whole path: API key, DB-backed session, gate, sandbox, envelope) against a minimal MCP SDK
 * server whose one tool returns a constant, with the same concurrent clients, in the same run.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createDb } from "../server/db";
import { deployMigrations } from "../server/db/migrate";
import { createPrismaPorts, startServerEngine } from "../server/engine";
import { createEventBus } from "../server/infra/events";
import { createMcpHttpHandler } from "../server/mcp/http";
import { createMcpBackend } from "../server/mcp/mcp-backend";
import { serveFetchHandler } from "../server/mcp/node-adapter";
import { syncToolsetsFolder } from "../server/modules/toolsets";
import { createApiKey } from "../server/services/api-keys";
import { type Benchmark, type BenchReport, ms, summarize } from "./harness";

const CLIENTS = 8;
const CALLS_PER_CLIENT = 40;
const WARMUP = 5;

const ACTION = `import { evaluate } from "toolstore/calculator";
export default async function () { return await evaluate({ expression: "6 * 7" }); }`;

async function load(url: string, headers: Record<string, string>, call: (c: Client) => Promise<unknown>) {
  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      const client = new Client({ name: `bench-${i}`, version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
      for (let w = 0; w < WARMUP; w++) await call(client);
      return client;
    }),
  );
  const samples: number[] = [];
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      for (let i = 0; i < CALLS_PER_CLIENT; i++) {
        const t = performance.now();
        await call(client);
        samples.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(clients.map((c) => c.close()));
  return { rps: samples.length / seconds, ...summarize(samples) };
}

async function minimalServer() {
  return serveFetchHandler(async (req) => {
    const server = new McpServer({ name: "constant", version: "1" });
    server.registerTool("constant", { description: "returns 42" }, async () => ({
      content: [{ type: "text", text: "42" }],
    }));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    return transport.handleRequest(req);
  });
}

async function mcpThroughput(): Promise<BenchReport> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-bench-mcp-"));
  const target = { provider: "sqlite" as const, url: path.join(dir, "bench.db") };
  await deployMigrations(target);
  const db = createDb(target);
  const bus = createEventBus(db);
  const user = await db.user.create({
    data: { username: "bench", displayName: "B", role: "admin", passwordHash: "x" },
  });
  await syncToolsetsFolder(db, path.resolve("toolsets"));
  const engine = await startServerEngine({ db, ports: createPrismaPorts(db) });
  const backend = createMcpBackend({ db, engine: async () => engine, publicUrl: "http://bench" });
  const ours = await serveFetchHandler(
    createMcpHttpHandler({
      db,
      backend,
      consoleUrl: "http://bench",
      allowedOrigins: [],
      rateLimitPerMinute: 1_000_000,
    }),
  );
  const baseline = await minimalServer();
  const { key } = await createApiKey(db, user.id, { name: "bench", mode: "auto" });
  try {
    const base = await load(baseline.url, {}, (c) => c.callTool({ name: "constant", arguments: {} }));
    const tool = await load(ours.url, { Authorization: `Bearer ${key}` }, async (c) => {
      const r = (await c.callTool({ name: "execute_code", arguments: { code: ACTION } })) as {
        isError?: boolean;
      };
      if (r.isError) throw new Error("execute_code failed in the benchmark");
    });
    return {
      title: `MCP over loopback: ${CLIENTS} concurrent clients × ${CALLS_PER_CLIENT} calls`,
      rows: [
        {
          metric: "execute_code requests/s",
          value: tool.rps.toFixed(0),
          note: "action + one read call (calculator.evaluate)",
        },
        { metric: "execute_code p50", value: ms(tool.p50) },
        { metric: "execute_code p99", value: ms(tool.p99) },
        {
          metric: "minimal SDK server requests/s",
          value: base.rps.toFixed(0),
          note: "one tool returning a constant",
        },
        { metric: "minimal SDK server p50", value: ms(base.p50) },
        { metric: "minimal SDK server p99", value: ms(base.p99) },
        {
          metric: "throughput ratio (minimal / execute_code)",
          value: `${(base.rps / tool.rps).toFixed(1)}×`,
          note: "the price of auth, a DB session, gate, audit rows and a sandboxed run",
        },
      ],
    };
  } finally {
    await ours.close();
    await baseline.close();
    await engine.shutdown();
    bus.close();
    await db.$disconnect();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmarks: Benchmark[] = [
  { name: "mcp: execute_code vs a minimal SDK server", run: mcpThroughput },
];
