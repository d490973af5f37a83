/**
 * The front server `npm start` runs (scripts/serve.ts): the operations endpoints it serves itself
 * get the connection's peer address, so TOOLSTORE_METRICS=local tells a loopback scraper from a
 * remote one even when the server listens on every interface; and, as in proxy.ts, they answer a
 * GET whatever Host names the server, while the other direct routes keep the Host check.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { createDb, type Db } from "../db";
import { createDbProbe } from "../infra/db-probe";
import { createMetrics } from "../infra/metrics";
import { readBodyText } from "../mcp/node-adapter";
import { createFrontServer } from "./front-server";
import { createOpsHandlers } from "./ops";
import { createRequestGuard } from "./request-guard";

/** This machine's first non-loopback IPv4 address (a remote client, as the server sees it). */
function externalAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i && i.family === "IPv4" && !i.internal)?.address;
}

function get(url: string, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: host ? { host } : {} }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
  });
}

// The live socket's stand-in: a real WebSocket server that greets whoever it is handed.
const echo = new WebSocketServer({ noServer: true });
const greet = (ws: WebSocket) => ws.send("hello");

/** What a WebSocket client to `path` gets: the first message, or the refusal's status and text. */
function openSocket(path: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers });
    ws.on("message", (data) => {
      resolve(`message ${String(data)}`);
      ws.close();
    });
    ws.on("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on("end", () => resolve(`${res.statusCode} ${body.trim()}`));
    });
    ws.on("error", () => {});
  });
}

let db: Db;
let server: http.Server;
let port: number;

beforeAll(async () => {
  // The probe is never asked here (only /metrics is); its database is a file nobody opens.
  db = createDb({ provider: "sqlite", url: path.join(os.tmpdir(), "toolstore-front-unused.db") });
  const ops = createOpsHandlers({
    probe: createDbProbe(db, { provider: "sqlite", url: "unused.db" }),
    pool: () => Promise.reject(new Error("readyz is not asked in this test")),
    metrics: createMetrics(),
    access: { access: "local" },
    listenHost: "0.0.0.0",
    trustProxy: false,
  });
  server = createFrontServer({
    guard: createRequestGuard({ host: "0.0.0.0" }),
    routes: {
      "/metrics": () => (req, connection) => ops.metrics(req, connection),
      "/api/mcp": () => async (req) => {
        if (req.method !== "POST") return new Response("mcp");
        const text = await readBodyText(req, 64);
        if (text === null) return new Response("too large", { status: 413 });
        return new Response(`${req.body === null ? "aside" : "stream"}: ${text}`);
      },
    },
    upgrades: { "/api/trpc": () => (req, socket, head) => echo.handleUpgrade(req, socket, head, greet) },
    fallback: (_req, res) => res.writeHead(404).end("next"),
    bodyAside: new Set(["/api/mcp"]),
  });
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await db.$disconnect();
});

describe("the front server's operations endpoints", () => {
  it("TOOLSTORE_METRICS=local: a loopback scraper gets the metrics on a server listening on 0.0.0.0", async () => {
    const res = await get(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.body).toContain("# TYPE process_resident_memory_bytes gauge");
  });

  it("a client on another address is refused with what to do", async () => {
    const address = externalAddress();
    expect(address, "this test needs a non-loopback IPv4 interface").toBeDefined();
    const res = await get(`http://${address}:${port}/metrics`);
    expect(res.status).toBe(403);
    expect(res.body).toContain("TOOLSTORE_METRICS");
  });

  it("answers whatever Host it is sent; other direct routes still check the Host", async () => {
    expect((await get(`http://127.0.0.1:${port}/metrics`, "10.9.8.7:3000")).status).toBe(200);
    const mcp = await get(`http://127.0.0.1:${port}/api/mcp`, "10.9.8.7:3000");
    expect(mcp.status).toBe(403);
    expect((await get(`http://127.0.0.1:${port}/api/mcp`)).body).toBe("mcp");
  });
});

/** POSTs `chunks` to /api/mcp, with a content-length when `declared`, else chunked. */
function post(
  chunks: string[],
  declared?: number,
): Promise<{ status: number; body: string; connection?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path: "/api/mcp",
        method: "POST",
        headers: declared === undefined ? {} : { "content-length": String(declared) },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }),
        );
      },
    );
    req.on("error", reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe("the front server's MCP route", () => {
  it("hands the handler the body from the Node request, not through a web stream", async () => {
    const json = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    expect(await post([json], Buffer.byteLength(json))).toMatchObject({
      status: 200,
      body: `aside: ${json}`,
    });
    expect(await post(['{"a":', "1}"])).toMatchObject({ status: 200, body: 'aside: {"a":1}' });
    expect(await post([], 0)).toMatchObject({ status: 200, body: "aside: " });
  });

  it("refuses a body over the limit, declared or sent, and closes that connection; the next request is served", async () => {
    expect(await post(["x"], 65)).toMatchObject({ status: 413, connection: "close" });
    const sent = await post(["x".repeat(40), "x".repeat(40), "x".repeat(40)]);
    expect(sent).toMatchObject({ status: 413, body: "too large", connection: "close" });
    expect(await post(["{}"])).toMatchObject({ status: 200, body: "aside: {}" });
  });
});

describe("the front server's WebSocket upgrades", () => {
  it("hands an upgrade of a listed path from this site to its handler", async () => {
    expect(await openSocket("/api/trpc")).toBe("message hello");
    expect(await openSocket("/api/trpc", { origin: `http://127.0.0.1:${port}` })).toBe("message hello");
  });

  it("refuses one from a page of another site, or for another Host, before the handler runs", async () => {
    expect(await openSocket("/api/trpc", { origin: "https://evil.example" })).toBe(
      "403 Forbidden: origin https://evil.example is not this site.",
    );
    expect(await openSocket("/api/trpc", { host: "10.9.8.7:3000" })).toMatch(/^403 Forbidden: host/);
  });

  it("refuses a path it does not serve, naming it", async () => {
    expect(await openSocket("/elsewhere")).toBe("404 No WebSocket is served at /elsewhere.");
  });
});
