/**
 * Serves a fetch-style handler on a plain node:http server: for tests and benchmarks that need the
 * MCP endpoint over real loopback HTTP without starting Next.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";

export async function serveFetchHandler(
  handler: (req: Request) => Promise<Response>,
  /** The one path served (others get 404), or null for every path (the handler routes). */
  path: string | null = "/api/mcp",
  /** 0 (default): any free port. A fixed port lets a restarted process serve the same address. */
  port = 0,
): Promise<{ url: string; server: http.Server; close(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
      if (path !== null && url.pathname !== path) {
        res.writeHead(404).end();
        return;
      }
      const requestHeaders = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === "string") requestHeaders.set(k, v);
        else if (Array.isArray(v)) for (const item of v) requestHeaders.append(k, item);
      }
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const controller = new AbortController();
      res.on("close", () => controller.abort());
      const request = new Request(url, {
        method: req.method ?? "GET",
        headers: requestHeaders,
        signal: controller.signal,
        ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: "half" } : {}),
      } as RequestInit);
      const response = await handler(request);
      const headers = Object.fromEntries(response.headers);
      // A body the handler refused unread (e.g. too large) would poison a kept-alive connection.
      if (hasBody && !req.readableEnded) headers.connection = "close";
      res.writeHead(response.status, headers);
      if (!response.body) {
        res.end();
        return;
      }
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
      res.end();
    } catch (error) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}${path ?? ""}`,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
