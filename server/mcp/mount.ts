/** The process's MCP handlers, composed from the engine, the database and the environment. */
import { getDb } from "../db";
import { getEngine } from "../engine";
import { loadEnv, publicUrl } from "../env";
import { siteOfRequest } from "../http/oauth";
import { getRequestGuard } from "../http/request-guard";
import { processSingleton } from "../infra/process-singletons";
import { processTelemetry } from "../infra/telemetry-setup";
import { createMcpHttpHandler } from "./http";
import type { McpBackend } from "./mcp-backend";
import { createMcpBackend } from "./mcp-backend";

export function getMcpBackend(): McpBackend {
  return processSingleton("mcpBackend", () =>
    createMcpBackend({ db: getDb(), engine: getEngine, publicUrl: publicUrl() }),
  );
}

export function getMcpHttpHandler(): (req: Request) => Promise<Response> {
  return processSingleton("mcpHttpHandler", () => {
    const env = loadEnv();
    processTelemetry(env);
    return createMcpHttpHandler({
      db: getDb(),
      backend: getMcpBackend(),
      consoleUrl: publicUrl(env),
      allowedOrigins: env.TOOLSTORE_ALLOWED_ORIGINS,
      guard: getRequestGuard(),
      rateLimitPerMinute: env.TOOLSTORE_MCP_RATE_LIMIT,
      siteOf: siteOfRequest,
    });
  });
}
