/** The process's MCP handlers, composed from the engine, the database and the environment. */
import { getDb } from "../db";
import { getEngine } from "../engine";
import { loadEnv, publicUrl } from "../env";
import { getRequestGuard } from "../http/request-guard";
import type { McpBackend } from "../services/mcp-backend";
import { createMcpBackend } from "../services/mcp-backend";
import { createMcpHttpHandler } from "./http";

const holder = globalThis as typeof globalThis & {
  __toolstoreMcp?: (req: Request) => Promise<Response>;
  __toolstoreMcpBackend?: McpBackend;
};

export function getMcpBackend(): McpBackend {
  holder.__toolstoreMcpBackend ??= createMcpBackend({
    db: getDb(),
    engine: getEngine,
    publicUrl: publicUrl(),
  });
  return holder.__toolstoreMcpBackend;
}

export function getMcpHttpHandler(): (req: Request) => Promise<Response> {
  if (!holder.__toolstoreMcp) {
    const env = loadEnv();
    holder.__toolstoreMcp = createMcpHttpHandler({
      db: getDb(),
      backend: getMcpBackend(),
      consoleUrl: publicUrl(env),
      allowedOrigins: env.TOOLSTORE_ALLOWED_ORIGINS,
      guard: getRequestGuard(),
      rateLimitPerMinute: env.TOOLSTORE_MCP_RATE_LIMIT,
    });
  }
  return holder.__toolstoreMcp;
}
