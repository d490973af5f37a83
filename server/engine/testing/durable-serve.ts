/**
 * A real ToolStore server process for durable-served.test.ts: the real engine (with the `tally`
 * test module, whose impls call TALLY_RECEIVER_URL), the instance channel, and one HTTP front
 * (server/http/front-server.ts) that answers /api/mcp with the MCP handler and /api/trpc/* with the
 * console's own tRPC router and context (a signed-in approver decides as in the browser). Settings
 * come from server/env.ts (DATABASE_URL, TOOLSTORE_HEARTBEAT_MS, TOOLSTORE_PARK_AFTER_MS, ...), the
 * port from FAULT_PORT. Prints `ready <mcp url> <instance id>` once it serves. Meant to be killed
 * or paused (SIGKILL, SIGSTOP).
 */
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "../../api/root";
import { createContext } from "../../api/trpc";
import { dbTarget, getDb } from "../../db";
import { loadEnv } from "../../env";
import { createFrontServer, MCP_PATH, SECURITY_HEADERS } from "../../http/front-server";
import { getRequestGuard } from "../../http/request-guard";
import { createInstanceChannel } from "../../infra/instance-channel";
import { instanceAddress } from "../../infra/instances";
import { processSingleton } from "../../infra/process-singletons";
import { createMcpHttpHandler } from "../../mcp/http";
import { createMcpBackend } from "../../mcp/mcp-backend";
import { serveOne } from "../../mcp/node-adapter";
import { startServerEngine } from "../index";
import { tallyModule } from "./tally-module";

const env = loadEnv();
const port = Number(process.env.FAULT_PORT ?? "0");
const receiverUrl = process.env.TALLY_RECEIVER_URL ?? "";
const db = getDb();
const channel = createInstanceChannel(dbTarget());
await channel.ready();
const engine = await startServerEngine({
  db,
  channel,
  workers: 1,
  address: instanceAddress("127.0.0.1", port),
  heartbeatMs: env.TOOLSTORE_HEARTBEAT_MS,
  httpAllowedHosts: env.TOOLSTORE_HTTP_ALLOWED_HOSTS,
  actionTimeoutMs: env.TOOLSTORE_ACTION_TIMEOUT_MS,
  approvalTtlMs: Math.round(env.TOOLSTORE_APPROVAL_TTL_MINUTES * 60_000),
  parkAfterMs: env.TOOLSTORE_PARK_AFTER_MS,
  maxHotWaits: env.TOOLSTORE_MAX_HOT_WAITS,
  extraModules: [() => [tallyModule(receiverUrl)]],
});
// The console's tRPC context finds the process's engine where getEngine() keeps it.
processSingleton("engine", () => Promise.resolve(engine));

const base = `http://127.0.0.1:${port}`;
const mcp = createMcpHttpHandler({
  db,
  backend: createMcpBackend({ db, engine: async () => engine, publicUrl: base }),
  consoleUrl: base,
  allowedOrigins: [],
  rateLimitPerMinute: 100_000,
});
const trpc = (req: Request) =>
  fetchRequestHandler({ endpoint: "/api/trpc", req, router: appRouter, createContext });
const server = createFrontServer({
  guard: getRequestGuard(),
  routes: { [MCP_PATH]: () => mcp },
  bodyAside: new Set([MCP_PATH]),
  fallback: (req, res) => {
    if ((req.url ?? "").startsWith("/api/trpc/")) return serveOne(trpc, req, res, SECURITY_HEADERS);
    res.writeHead(404).end();
  },
});
await new Promise<void>((resolve, reject) => {
  server.once("error", reject);
  server.listen(port, "127.0.0.1", resolve);
});
console.log(`ready ${base}${MCP_PATH} ${engine.instanceId}`);
