/**
 * Cancellation and run state over the MCP mount, real HTTP on loopback, because a session's
 * requests may reach any instance and a cancel must find its run wherever it runs:
 * two instances (each its own engine, backend and handler) over one SQLite database. A
 * notifications/cancelled for an execute_code waiting on an approval cancels the run on whichever
 * instance runs it, and its request expires at once; toolstore://runs/<id> gives the key's own
 * runs' final state.
 */
import fs from "node:fs";
import type http from "node:http";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { type ServerEngine, startServerEngine } from "../engine";
import { createApiKey } from "../services/api-keys";
import { createMcpHttpHandler } from "./http";
import { createMcpBackend, type McpBackend } from "./mcp-backend";
import { serveFetchHandler } from "./node-adapter";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-mcp-cancel-"));
let db: Db;
let userId: string;
const engines: ServerEngine[] = [];
const servers: Awaited<ReturnType<typeof serveFetchHandler>>[] = [];

const SAVE = `import { save } from "toolstore/assets";
export default async function () { return await save({ data_base64: "iVBORw0KGgo=", name: "never" }); }`;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "cancel.db") };
  await deployMigrations(target);
  db = createDb(target);
  userId = (
    await db.user.create({ data: { username: "owner", displayName: "O", role: "admin", passwordHash: "x" } })
  ).id;
  for (const instanceId of ["mcp-a", "mcp-b"]) {
    const engine = await startServerEngine({ db, instanceId, workers: 1, approvalTtlMs: 60_000 });
    engines.push(engine);
    const backend = createMcpBackend({ db, engine: async () => engine, publicUrl: "http://console.test" });
    servers.push(
      await serveFetchHandler(
        createMcpHttpHandler({
          db,
          backend,
          consoleUrl: "http://console.test",
          allowedOrigins: [],
          rateLimitPerMinute: 1000,
        }),
      ),
    );
  }
}, 120_000);

afterAll(async () => {
  for (const s of servers) await s.close();
  for (const e of engines) await e.shutdown();
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function connect(url: string, apiKey: string) {
  const client = new Client({ name: "cancel-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

async function pendingApproval(apiKeyId: string) {
  for (let i = 0; i < 200; i++) {
    const row = await db.approval.findFirst({ where: { status: "pending", apiKeyId } });
    if (row) return row;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no approval was requested");
}

async function newKey(name: string) {
  return createApiKey(db, userId, { name, mode: "default", modules: ["*"] });
}

describe("MCP cancellation", () => {
  it("[MCP]: notifications/cancelled for a call waiting on approval cancels the run; its request expires at once", async () => {
    const k = await newKey("cancel-same");
    const { client } = await connect(servers[0]?.url ?? "", k.key);
    const controller = new AbortController();
    // The SDK client sends notifications/cancelled for the request when its signal aborts.
    const call = client
      .callTool({ name: "execute_code", arguments: { code: SAVE } }, undefined, {
        signal: controller.signal,
        timeout: 60_000,
      })
      .catch((e: Error) => e.message);
    const approval = await pendingApproval(k.id);
    controller.abort("changed my mind");
    await call;
    let row = await db.approval.findUniqueOrThrow({ where: { id: approval.id } });
    for (let i = 0; i < 40 && row.status === "pending"; i++) {
      await new Promise((r) => setTimeout(r, 25));
      row = await db.approval.findUniqueOrThrow({ where: { id: approval.id } });
    }
    expect(row.status).toBe("expired");
    expect(row.endReason).toMatch(/cancelled/);
    let run = await db.actionRun.findUniqueOrThrow({ where: { id: approval.runId ?? "" } });
    for (let i = 0; i < 100 && run.status === "running"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      run = await db.actionRun.findUniqueOrThrow({ where: { id: run.id } });
    }
    expect(run.status).toBe("error");
    expect(run.cancelRequestedAt).not.toBeNull();
    expect(await db.imageAsset.count({ where: { runId: run.id } })).toBe(0);
    await client.close();
  });

  it("[MCP]: a cancel that reaches the other instance still cancels the run where it runs", async () => {
    const k = await newKey("cancel-other");
    const { client, transport } = await connect(servers[0]?.url ?? "", k.key);
    const call = client
      .callTool({ name: "execute_code", arguments: { code: SAVE } }, undefined, { timeout: 60_000 })
      .then(
        (r) => r as { structuredContent?: { ok: boolean; error?: { message: string } } },
        (e: Error) => e,
      );
    const approval = await pendingApproval(k.id);
    const run = await db.actionRun.findUniqueOrThrow({ where: { id: approval.runId ?? "" } });
    expect(run.instanceId).toBe("mcp-a");
    expect(run.mcpRequestId).toBeTruthy();
    // Behind a load balancer the notification lands on instance B.
    const res = await fetch(servers[1]?.url ?? "", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${k.key}`,
        "mcp-session-id": transport.sessionId ?? "",
        "mcp-protocol-version": transport.protocolVersion ?? "2025-06-18",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: Number(run.mcpRequestId), reason: "user pressed stop" },
      }),
    });
    expect(res.status).toBe(202);
    // At once: B expired the request itself, before A even noticed.
    const row = await db.approval.findUniqueOrThrow({ where: { id: approval.id } });
    expect(row.status).toBe("expired");
    // A sees the cancel through the database and ends the run; the client gets the envelope.
    const result = await call;
    expect(result).not.toBeInstanceOf(Error);
    const envelope = (result as { structuredContent?: { ok: boolean } }).structuredContent;
    expect(envelope?.ok).toBe(false);
    const finished = await db.actionRun.findUniqueOrThrow({ where: { id: run.id } });
    expect(finished.status).toBe("error");
    expect(await db.imageAsset.count({ where: { runId: run.id } })).toBe(0);
    await client.close();
  });

  it("[MCP]: toolstore://runs/<id> gives the key's own run's final state, and nothing for another key", async () => {
    const k = await newKey("runs-reader");
    const { client } = await connect(servers[1]?.url ?? "", k.key);
    const result = (await client.callTool({
      name: "execute_code",
      arguments: { code: "export default async function () { return 6 * 7; }" },
    })) as { _meta?: Record<string, unknown>; structuredContent?: { result?: unknown } };
    const runId = String(result._meta?.["toolstore/runId"] ?? "");
    expect(runId).toBeTruthy();
    const read = await client.readResource({ uri: `toolstore://runs/${runId}` });
    const state = JSON.parse(String((read.contents[0] as { text: string }).text));
    expect(state).toMatchObject({ id: runId, status: "ok", envelope: { ok: true, result: 42 } });
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain(`toolstore://runs/${runId}`);
    await client.close();

    const stranger = await connect(servers[0]?.url ?? "", (await newKey("stranger")).key);
    await expect(stranger.client.readResource({ uri: `toolstore://runs/${runId}` })).rejects.toThrow(
      /not found/i,
    );
    await stranger.client.close();
  });

  it("[MCP]: 20 calls cancelled by the SDK client while waiting on approval leave no stream or socket open", async () => {
    const k = await newKey("cancel-sockets");
    // A run that takes a moment to wind down after its cancel (a loaded instance, PostgreSQL), so the
    // SDK aborts the handler before it returns: the order in which no response used to be sent.
    const backend = createMcpBackend({
      db,
      engine: async () => engines[0] as ServerEngine,
      publicUrl: "http://console.test",
    });
    const slowToEnd: McpBackend = {
      ...backend,
      execute: async (input) => {
        const envelope = await backend.execute(input);
        await new Promise((r) => setTimeout(r, 200));
        return envelope;
      },
    };
    const served = await serveFetchHandler(
      createMcpHttpHandler({
        db,
        backend: slowToEnd,
        consoleUrl: "http://console.test",
        allowedOrigins: [],
        rateLimitPerMinute: 1000,
      }),
    );
    servers.push(served);
    // An idle kept-alive socket is the client's connection pool, not a leak: the server drops those
    // after 1 s, so what is still open 5 s later is held by a stream that was never ended.
    served.server.keepAliveTimeout = 1_000;
    const openPosts = new Set<http.ServerResponse>();
    const track = (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (req.method !== "POST") return;
      openPosts.add(res);
      res.on("close", () => openPosts.delete(res));
    };
    served.server.on("request", track);
    try {
      const { client } = await connect(served.url, k.key);
      const seen = new Set<string>();
      for (let i = 0; i < 20; i++) {
        const controller = new AbortController();
        const call = client
          .callTool({ name: "execute_code", arguments: { code: SAVE } }, undefined, {
            signal: controller.signal,
            timeout: 60_000,
          })
          .catch((e: Error) => e);
        seen.add((await newPendingApproval(k.id, seen)).id);
        controller.abort("changed my mind");
        expect(await call).toBeInstanceOf(Error);
      }
      await new Promise((r) => setTimeout(r, 5_000));
      expect(openPosts.size).toBe(0);
      const sockets = await new Promise<number>((resolve, reject) =>
        served.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
      // The one socket left is the session's GET stream, which the client keeps open on purpose.
      expect(sockets).toBeLessThanOrEqual(1);
      await client.close();
    } finally {
      served.server.off("request", track);
    }
  }, 60_000);
});

async function newPendingApproval(apiKeyId: string, seen: Set<string>) {
  for (let i = 0; i < 200; i++) {
    const row = await db.approval.findFirst({
      where: { status: "pending", apiKeyId, id: { notIn: [...seen] } },
    });
    if (row) return row;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("no approval was requested");
}
