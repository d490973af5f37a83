/**
 * The fault suite (issue #15): kill -9 of a REAL server process (scripts/fault-serve.ts: the real
 * engine and MCP handler) at four points of an approval's life, on SQLite (the process restarts
 * on the same address) and on PostgreSQL with two instances (this test process is instance B,
 * which approves and, after the liveness timeout, finalizes). The action's side effect is a POST
 * to a local receiver that counts hits. After each kill: no duplicate side effect, no approval
 * left pending or allowed-unconsumed, no run left running, the run's final state readable over
 * MCP (toolstore://runs/<id>), and on SQLite `integrity_check` ok. FAULT_TRIALS=10 runs ten
 * trials per point (the local run the issue asks for); CI runs one.
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
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../../db";
import { deployMigrations } from "../../db/migrate";
import { type DbTarget, pgConfigFromUrl } from "../../db/provider";
import { createMcpHttpHandler } from "../../mcp/http";
import { serveFetchHandler } from "../../mcp/node-adapter";
import { createApiKey } from "../api-keys";
import { createMcpBackend } from "../mcp-backend";
import { type ServerEngine, startServerEngine } from "./index";
import { createInstanceChannel, type InstanceChannel } from "./instance-channel";

const TRIALS = Number(process.env.FAULT_TRIALS ?? "1");
const HEARTBEAT_MS = 1_000;
/** Liveness timeout (2.5 beats) plus a sweep and slack. */
const SETTLE_MS = 10_000;
const POINTS = ["pending", "after-allow", "during-impl", "after-impl"] as const;
type Point = (typeof POINTS)[number];
const pgBase = process.env.TOOLSTORE_TEST_POSTGRES_URL;
const debug = (...args: unknown[]) => {
  if (process.env.FAULT_DEBUG) console.error(new Date().toISOString().slice(11, 23), ...args);
};

interface Receiver {
  url: string;
  hits: Map<string, number>;
  /** Called on each hit; `hold` keeps the response open (the impl is in flight). */
  onHit?: (trial: string) => { hold: boolean };
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const held: http.ServerResponse[] = [];
  const receiver: Receiver = { url: "", hits: new Map(), close: async () => {} };
  const server = http.createServer((req, res) => {
    const trial = new URL(req.url ?? "/", "http://x").searchParams.get("trial") ?? "";
    receiver.hits.set(trial, (receiver.hits.get(trial) ?? 0) + 1);
    const { hold } = receiver.onHit?.(trial) ?? { hold: false };
    if (hold) held.push(res);
    else res.writeHead(200, { "content-type": "text/plain" }).end("done");
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

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Spawns a server process; resolves with its MCP URL once it prints `ready`. */
async function spawnServer(databaseUrl: string, port: number): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/fault-serve.ts"], {
    cwd: path.resolve("."),
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      FAULT_PORT: String(port),
      TOOLSTORE_HEARTBEAT_MS: String(HEARTBEAT_MS),
      TOOLSTORE_HTTP_ALLOWED_HOSTS: "127.0.0.1",
      TOOLSTORE_APPROVAL_TTL_MINUTES: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += String(d);
      const m = /ready (\S+)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}) before ready: ${stderr}`)));
  });
  return { child, url };
}

function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number): Promise<T> {
  const end = Date.now() + ms;
  let value = await read();
  while (!done(value) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 25));
    value = await read();
  }
  return value;
}

async function mcpClient(url: string, apiKey: string) {
  const client = new Client({ name: "fault-suite", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
    }),
  );
  return client;
}

const actionFor = (receiverUrl: string, trial: string) => `import { fetch } from "toolstore/http";
export default async function () {
  const r = await fetch({ url: "${receiverUrl}/hit?trial=${trial}", method: "POST", body: "x" });
  const t = Date.now();
  while (Date.now() - t < 1500) {}
  return r.status;
}`;

interface Setup {
  name: string;
  target: DbTarget;
  /** SQLite: the killed process comes back on the same address; PostgreSQL: B finalizes alone. */
  restart: boolean;
  drop?: () => Promise<void>;
}

async function sqliteSetup(): Promise<Setup> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-fault-"));
  return {
    name: "SQLite (restart on the same address)",
    target: { provider: "sqlite", url: path.join(dir, "fault.db") },
    restart: true,
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

async function pgSetup(): Promise<Setup> {
  const name = `toolstore_fault_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client(pgConfigFromUrl(pgBase ?? ""));
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(pgBase ?? "");
  url.pathname = `/${name}`;
  return {
    name: "PostgreSQL (two instances)",
    target: { provider: "postgresql", url: url.toString() },
    restart: false,
    drop: async () => {
      const c = new pg.Client(pgConfigFromUrl(pgBase ?? ""));
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

const databaseUrlOf = (t: DbTarget) => (t.provider === "sqlite" ? `file:${t.url}` : t.url);

for (const makeSetup of [sqliteSetup, ...(pgBase ? [pgSetup] : [])]) {
  describe.sequential(`fault suite: kill -9 of a real server`, () => {
    let setup: Setup;
    let db: Db;
    let b: ServerEngine;
    let channel: InstanceChannel;
    let bMcp: { url: string; close(): Promise<void> };
    let receiver: Receiver;
    let apiKey: string;
    let userId: string;
    let port: number;
    let a: { child: ChildProcess; url: string } | undefined;
    const counts: Record<string, Record<string, number>> = {};

    beforeAll(async () => {
      setup = await makeSetup();
      await deployMigrations(setup.target);
      db = createDb(setup.target);
      channel = createInstanceChannel(setup.target);
      await channel.ready();
      userId = (
        await db.user.create({
          data: { username: "alice", displayName: "A", role: "admin", passwordHash: "x" },
        })
      ).id;
      apiKey = (await createApiKey(db, userId, { name: "agent", mode: "default", modules: ["*"] })).key;
      b = await startServerEngine({
        db,
        channel,
        workers: 1,
        instanceId: "instance-b",
        heartbeatMs: HEARTBEAT_MS,
        httpAllowedHosts: ["127.0.0.1"],
      });
      bMcp = await serveFetchHandler(
        createMcpHttpHandler({
          db,
          backend: createMcpBackend({ db, engine: async () => b, publicUrl: "http://b.test" }),
          consoleUrl: "http://b.test",
          allowedOrigins: [],
          rateLimitPerMinute: 100_000,
        }),
      );
      receiver = await startReceiver();
      port = await freePort();
    }, 60_000);

    afterAll(async () => {
      if (a) await kill9(a.child);
      await receiver?.close();
      await bMcp?.close();
      await b?.shutdown();
      await channel?.close();
      await db?.$disconnect();
      await setup?.drop?.();
      console.log(`fault suite on ${setup?.name}: ${JSON.stringify(counts)}`);
    });

    async function trial(point: Point): Promise<string> {
      a ??= await spawnServer(databaseUrlOf(setup.target), port);
      const server = a;
      const id = randomUUID().slice(0, 8);
      let runId: string | undefined;
      const killed = new Promise<void>((resolve) => {
        receiver.onHit = (t) => {
          if (t !== id) return { hold: false };
          if (point === "during-impl") {
            void kill9(server.child).then(resolve);
            return { hold: true };
          }
          if (point === "after-impl") setTimeout(() => void kill9(server.child).then(resolve), 300);
          return { hold: false };
        };
        if (point === "pending" || point === "after-allow") {
          void (async () => {
            const approval = await until(
              () => db.approval.findFirst({ where: { status: "pending", argsSnapshot: { contains: id } } }),
              (r) => r !== null,
              90_000,
            );
            if (point === "after-allow" && approval) {
              await b.approvals.decide({
                approvalId: approval.id,
                answer: "once",
                decidedBy: { userId, label: "alice" },
              });
            }
            await kill9(server.child);
            resolve();
          })();
        } else {
          // The impl only runs once someone allows the call: B approves as soon as it is asked.
          void (async () => {
            const approval = await until(
              () => db.approval.findFirst({ where: { status: "pending", argsSnapshot: { contains: id } } }),
              (r) => r !== null,
              90_000,
            );
            if (approval) {
              await b.approvals.decide({
                approvalId: approval.id,
                answer: "once",
                decidedBy: { userId, label: "alice" },
              });
            }
          })();
        }
      });
      debug(point, id, "calling");
      const client = await mcpClient(server.url, apiKey);
      const call = client
        .callTool({ name: "execute_code", arguments: { code: actionFor(receiver.url, id) } }, undefined, {
          timeout: 60_000,
          onprogress: (p) => {
            runId ??= /Run (\S+) started/.exec(p.message ?? "")?.[1];
          },
        })
        .then(
          () => "answered",
          () => "failed",
        );
      await killed;
      debug(point, id, "killed");
      a = undefined;
      // The client of a killed server never gets its answer (its transport would retry the
      // stream until the request timeout; closing it ends the call at once).
      await client.close().catch(() => undefined);
      expect(await call).toBe("failed");
      const started = Date.now();
      if (setup.restart) a = await spawnServer(databaseUrlOf(setup.target), port);
      debug(point, id, "restarted");

      const run = await until(
        () => db.actionRun.findFirst({ where: { code: { contains: id } } }),
        (r) => r !== null && r.status !== "running",
        SETTLE_MS,
      );
      expect(run?.status).toBe("interrupted");
      if (!setup.restart) expect(Date.now() - started).toBeLessThan(SETTLE_MS);
      runId ??= run?.id;
      expect(run?.id).toBe(runId);
      const hits = receiver.hits.get(id) ?? 0;
      expect(hits).toBeLessThanOrEqual(1);
      if (point === "pending") expect(hits).toBe(0);
      if (point === "during-impl" || point === "after-impl") expect(hits).toBe(1);
      const approvals = await db.approval.findMany({ where: { runId: run?.id ?? "" } });
      // The kill came after the request was made (the trial waited for it).
      expect(approvals).toHaveLength(1);
      const [approval] = approvals;
      expect(approval?.status).not.toBe("pending");
      if (approval?.status === "allowed") expect(approval.consumedAt).not.toBeNull();
      // Allowed but unused ends abandoned; a used one leaves a hit; never both unused and hit.
      if (approval?.status === "abandoned") expect(hits).toBe(0);
      const envelope = JSON.parse(run?.envelope ?? "{}") as { calls: { outcome?: string }[] };
      if (point === "during-impl") expect(envelope.calls[0]?.outcome).toBe("unknown");
      // The impl returned; its `call.finished` row commits a moment later, so a kill right after
      // may leave it `unknown` (maybe happened), never `not_run`.
      if (point === "after-impl") expect(["completed", "unknown"]).toContain(envelope.calls[0]?.outcome);
      if (setup.target.provider === "sqlite") {
        const check = await db.$queryRawUnsafe<{ integrity_check: string }[]>("PRAGMA integrity_check");
        expect(check[0]?.integrity_check).toBe("ok");
      }
      // The client can learn the final state over MCP, from a live instance.
      const reader = await mcpClient(a?.url ?? bMcp.url, apiKey);
      const resource = await reader.readResource({ uri: `toolstore://runs/${run?.id}` });
      const state = JSON.parse(String((resource.contents[0] as { text: string }).text));
      expect(state).toMatchObject({
        id: run?.id,
        status: "interrupted",
        envelope: { error: { kind: "interrupted" } },
      });
      await reader.close();
      return approval?.status ?? "none";
    }

    for (const point of POINTS) {
      it(
        `[FAULT]: ${makeSetup === sqliteSetup ? "SQLite" : "PostgreSQL"}, killed at "${point}": every row ends true, no side effect twice`,
        async () => {
          for (let i = 0; i < TRIALS; i++) {
            const outcome = await trial(point);
            counts[point] ??= {};
            const c = counts[point] as Record<string, number>;
            c[outcome] = (c[outcome] ?? 0) + 1;
          }
        },
        TRIALS * 120_000,
      );
    }
  });
}
