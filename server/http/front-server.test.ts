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
import { createDb, type Db } from "../db";
import { createDbProbe } from "../infra/db-probe";
import { createMetrics } from "../infra/metrics";
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
      "/api/mcp": () => async () => new Response("mcp"),
    },
    fallback: (_req, res) => res.writeHead(404).end("next"),
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
