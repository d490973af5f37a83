/**
 * For tests: a streamable-HTTP MCP upstream on loopback. Each request gets a fresh SDK server
 * from `build` (stateless, like most hosted servers), so a test changes what the upstream lists
 * between calls by changing what `build` returns. `authorize` may turn a request away with 401.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export interface TestUpstream {
  url: string;
  close(): Promise<void>;
}

export async function startHttpUpstream(
  build: () => McpServer,
  authorize: (req: IncomingMessage) => boolean = () => true,
): Promise<TestUpstream> {
  const http = createServer(async (req, res) => {
    if (!authorize(req)) {
      res.writeHead(401, { "www-authenticate": 'Bearer error="invalid_token"' }).end("unauthorized");
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = build();
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}
