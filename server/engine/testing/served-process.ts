/**
 * Test helpers for kill -9 tests of a REAL server process (scripts/fault-serve.ts: the real engine,
 * MCP handler and instance channel): a scratch database (SQLite file or a fresh PostgreSQL
 * database), spawning and killing the server, a local HTTP receiver that counts an action's side
 * effects, and an SDK client. Used by the fault suite and the MCP task crash test.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import pg from "pg";
import { type DbTarget, pgConfigFromUrl } from "../../db/provider";

export interface ScratchDatabase {
  target: DbTarget;
  /** DATABASE_URL for a child process. */
  url: string;
  drop(): Promise<void>;
}

export function sqliteScratch(prefix: string): ScratchDatabase {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const file = path.join(dir, "test.db");
  return {
    target: { provider: "sqlite", url: file },
    url: `file:${file}`,
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

export async function postgresScratch(baseUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomUUID().replace(/-/g, "").slice(0, 10)}`;
  const admin = new pg.Client(pgConfigFromUrl(baseUrl));
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    target: { provider: "postgresql", url: url.toString() },
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client(pgConfigFromUrl(baseUrl));
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface Receiver {
  url: string;
  /** Hits per `trial` query parameter. */
  hits: Map<string, number>;
  /**
   * Called on each hit; `hold` keeps the response open (the impl is in flight) until `release`;
   * `body` is the answer (default `done`).
   */
  onHit?: (trial: string, url: URL) => { hold: boolean; body?: string };
  /** Answers the held responses (`done`); returns how many there were. */
  release(): number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const held: http.ServerResponse[] = [];
  const answer = (res: http.ServerResponse, body = "done") =>
    res.writeHead(200, { "content-type": "text/plain" }).end(body);
  const receiver: Receiver = {
    url: "",
    hits: new Map(),
    release: () => {
      const waiting = held.splice(0);
      for (const res of waiting) answer(res);
      return waiting.length;
    },
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const trial = url.searchParams.get("trial") ?? "";
    receiver.hits.set(trial, (receiver.hits.get(trial) ?? 0) + 1);
    const { hold, body } = receiver.onHit?.(trial, url) ?? { hold: false };
    if (hold) held.push(res);
    else answer(res, body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise((r) => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      server.close(() => r());
    });
  return receiver;
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export interface ServedProcess {
  child: ChildProcess;
  /** The MCP endpoint. */
  url: string;
  instanceId: string;
}

/**
 * Spawns a server process on 127.0.0.1:port; resolves once it prints `ready`. `script`: the
 * server to run (default scripts/fault-serve.ts; ./durable-serve.ts adds a test module and tRPC).
 */
export async function spawnServer(
  databaseUrl: string,
  port: number,
  env: Record<string, string> = {},
  script = "scripts/fault-serve.ts",
): Promise<ServedProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: path.resolve("."),
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      FAULT_PORT: String(port),
      TOOLSTORE_HTTP_ALLOWED_HOSTS: "127.0.0.1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  return new Promise<ServedProcess>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += String(d);
      const m = /ready (\S+) (\S+)/.exec(out);
      if (m?.[1] && m[2]) resolve({ child, url: m[1], instanceId: m[2] });
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}) before ready: ${stderr}`)));
  });
}

export function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/** Re-reads until `done` holds or `ms` passed; returns the last value either way. */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number): Promise<T> {
  const end = Date.now() + ms;
  let value = await read();
  while (!done(value) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 25));
    value = await read();
  }
  return value;
}

export async function mcpClient(url: string, apiKey: string, name = "kill-test"): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
    }),
  );
  return client;
}
