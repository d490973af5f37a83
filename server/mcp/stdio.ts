/**
 * The same two tools over stdio, for clients that spawn a command. The key comes from
 * TOOLSTORE_API_KEY; one process is one MCP session. Nothing but protocol goes to stdout.
 */
import { randomUUID } from "node:crypto";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { AppError } from "../core/errors";
import type { Db } from "../db";
import { verifyApiKey } from "../services/api-keys";
import type { McpBackend } from "./mcp-backend";
import { createMcpServer } from "./server";

export async function serveMcpOverStdio(options: {
  db: Db;
  backend: McpBackend;
  apiKey: string | undefined;
}) {
  const identity = await verifyApiKey(options.db, options.apiKey);
  if (!identity) {
    throw new AppError(
      "UNAUTHENTICATED",
      options.apiKey
        ? "TOOLSTORE_API_KEY is not a valid, unrevoked key; create one with: npm run toolstore -- keys create --name <name>"
        : "set TOOLSTORE_API_KEY to an API key; create one with: npm run toolstore -- keys create --name <name>",
    );
  }
  const sessionId = `stdio-${randomUUID()}`;
  await options.db.mcpSession.create({ data: { id: sessionId, apiKeyId: identity.id, clientName: "stdio" } });
  const server = await createMcpServer({ identity, sessionId, backend: options.backend });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  await closed;
  await options.db.mcpSession.updateMany({ where: { id: sessionId }, data: { closedAt: new Date() } });
}
