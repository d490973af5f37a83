/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against the real
 * /api/mcp handler over loopback HTTP, with the example toolsets and a real engine. The runner has
 * no option for credentials, so the test's HTTP front adds the API key's Authorization header to
 * each request, as a configured client would; Host and Origin reach the handler untouched (the
 * dns-rebinding-protection scenario must pass). Scenarios that are expected to fail are listed,
 * each with its reason, in conformance-baseline.yml; a stale entry fails the run too.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "../engine";
import { syncToolsetsFolder } from "../modules/toolsets";
import { createApiKey } from "../services/api-keys";
import { createMcpHttpHandler } from "./http";
import { createMcpBackend } from "./mcp-backend";
import { serveFetchHandler } from "./node-adapter";

const execFileAsync = promisify(execFile);
const RUNNER = path.resolve("node_modules/@modelcontextprotocol/conformance/dist/index.js");
const BASELINE = path.resolve(import.meta.dirname, "conformance-baseline.yml");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-conformance-"));
let db: Db;
let engine: ServerEngine;
let server: { url: string; close(): Promise<void> };

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "conformance.db") };
  await deployMigrations(target);
  db = createDb(target);
  const owner = await db.user.create({
    data: { username: "conformance", displayName: "C", role: "admin", passwordHash: "x" },
  });
  expect((await syncToolsetsFolder(db, path.resolve("toolsets"))).failed).toEqual([]);
  engine = await startServerEngine({ db, ports: createPrismaPorts(db), approvalTtlMs: 60_000 });
  const { key } = await createApiKey(db, owner.id, { name: "conformance", mode: "auto", modules: ["*"] });
  const handler = createMcpHttpHandler({
    db,
    backend: createMcpBackend({ db, engine: async () => engine, publicUrl: "http://127.0.0.1" }),
    consoleUrl: "http://127.0.0.1",
    allowedOrigins: [],
    rateLimitPerMinute: 100_000,
  });
  server = await serveFetchHandler((req) => {
    const headers = new Headers(req.headers);
    headers.set("authorization", `Bearer ${key}`);
    return handler(
      new Request(req.url, {
        method: req.method,
        headers,
        body: req.body,
        signal: req.signal,
        duplex: "half",
      } as RequestInit),
    );
  });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await engine?.shutdown();
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function conformance(...args: string[]) {
  const url = server.url.replace("127.0.0.1", "localhost");
  try {
    const { stdout } = await execFileAsync(process.execPath, [RUNNER, "server", "--url", url, ...args], {
      timeout: 240_000,
      maxBuffer: 32 << 20,
    });
    return { code: 0, out: stdout };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

describe("[MCP] conformance", () => {
  it("dns-rebinding-protection passes: a foreign Host/Origin gets 4xx, localhost is served", async () => {
    const run = await conformance("--scenario", "dns-rebinding-protection");
    expect(run.out).toContain("localhost-host-rebinding-rejected");
    expect(run.code, run.out).toBe(0);
  }, 120_000);

  it("the active suite fails only on the scenarios listed in the baseline, each with its reason", async () => {
    const run = await conformance("--expected-failures", BASELINE);
    expect(run.out, run.out).toContain("Baseline check passed");
    expect(run.code, run.out).toBe(0);
  }, 300_000);
});
