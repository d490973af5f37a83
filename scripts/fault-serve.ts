/**
 * A real ToolStore server process for the fault suite (server/engine/fault-suite.test.ts)
 * and the cross-instance benchmark: the real engine, the MCP HTTP handler and the instance
 * channel over DATABASE_URL, on 127.0.0.1:FAULT_PORT, with heartbeats from
 * TOOLSTORE_HEARTBEAT_MS. Prints `ready <url>` on stdout once it serves. Meant to be killed.
 */
import { createDb } from "../server/db";
import { parseDatabaseUrl } from "../server/db/provider";
import { startServerEngine } from "../server/engine";
import { loadEnv } from "../server/env";
import { createInstanceChannel } from "../server/infra/instance-channel";
import { instanceAddress } from "../server/infra/instances";
import { createMcpHttpHandler } from "../server/mcp/http";
import { createMcpBackend } from "../server/mcp/mcp-backend";
import { serveFetchHandler } from "../server/mcp/node-adapter";

const env = loadEnv();
const port = Number(process.env.FAULT_PORT ?? "0");
const target = parseDatabaseUrl(env.DATABASE_URL);
const db = createDb(target);
const channel = createInstanceChannel(target);
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
});
const handler = createMcpHttpHandler({
  db,
  backend: createMcpBackend({ db, engine: async () => engine, publicUrl: `http://127.0.0.1:${port}` }),
  consoleUrl: `http://127.0.0.1:${port}`,
  allowedOrigins: [],
  rateLimitPerMinute: 100_000,
});
const served = await serveFetchHandler(handler, "/api/mcp", port);
console.log(`ready ${served.url} ${engine.instanceId}`);
