/**
 * execute_code as an MCP task (SDK experimental tasks, protocol 2025-11-25), with the SDK's own
 * Client over real HTTP: a call that waits on a human is started on one instance, the client
 * disconnects, a human approves on the other instance, and the client comes back in a new session
 * on that other instance and fetches the result. Two engines over one database stand in for two
 * instances; SQLite always, PostgreSQL too when TOOLSTORE_TEST_POSTGRES_URL is set.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { pgConfigFromUrl } from "../db/provider";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "../engine";
import { syncToolsetsFolder } from "../modules/toolsets";
import { createApiKey } from "../services/api-keys";
import { createMcpHttpHandler } from "./http";
import { createMcpBackend } from "./mcp-backend";
import { serveFetchHandler } from "./node-adapter";

const PIXEL =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const GATED = `import { save } from "toolstore/assets";
export default async function () { const saved = await save({ data_base64: "${PIXEL}" }); return { saved: !!saved.asset_id }; }`;

interface Instance {
  db: Db;
  engine: ServerEngine;
  server: { url: string; close(): Promise<void> };
}

async function connect(url: string, apiKey: string) {
  const client = new Client({ name: "task-client", version: "0.9.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
    }),
  );
  return client;
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > end) throw new Error(`condition not met in ${ms} ms; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function suite(
  label: string,
  makeTarget: () => Promise<{ target: Parameters<typeof createDb>[0]; drop(): Promise<void> }>,
) {
  describe(label, () => {
    const instances: Instance[] = [];
    let drop: () => Promise<void> = async () => {};
    let apiKey = "";
    let otherKey = "";
    let approverId = "";

    beforeAll(async () => {
      const made = await makeTarget();
      drop = made.drop;
      await deployMigrations(made.target);
      for (let i = 0; i < 2; i++) {
        const db = createDb(made.target);
        if (i === 0) {
          const owner = await db.user.create({
            data: { username: "owner", displayName: "Owner", role: "admin", passwordHash: "x" },
          });
          approverId = (
            await db.user.create({
              data: { username: "approver", displayName: "Approver", role: "approver", passwordHash: "x" },
            })
          ).id;
          apiKey = (await createApiKey(db, owner.id, { name: "tasks", mode: "default", modules: ["*"] })).key;
          otherKey = (await createApiKey(db, owner.id, { name: "other", mode: "default", modules: ["*"] }))
            .key;
          expect((await syncToolsetsFolder(db, path.resolve("toolsets"))).failed).toEqual([]);
        }
        const engine = await startServerEngine({
          db,
          ports: createPrismaPorts(db),
          approvalTtlMs: 60_000,
          workers: 1,
        });
        const backend = createMcpBackend({
          db,
          engine: async () => engine,
          publicUrl: "http://console.test",
        });
        const server = await serveFetchHandler(
          createMcpHttpHandler({
            db,
            backend,
            consoleUrl: "http://console.test",
            allowedOrigins: [],
            rateLimitPerMinute: 1000,
          }),
        );
        instances.push({ db, engine, server });
      }
    }, 180_000);

    afterAll(async () => {
      for (const i of instances) {
        await i.server.close();
        await i.engine.shutdown();
        await i.db.$disconnect();
      }
      await drop();
    });

    it("[MCP]: a gated task survives a disconnect and its result is fetched on the other instance", async () => {
      const [a, b] = instances as [Instance, Instance];
      const first = await connect(a.server.url, apiKey);
      const { tools } = await first.listTools();
      expect(tools.find((t) => t.name === "execute_code")?.execution?.taskSupport).toBe("optional");

      const created = await first.request(
        {
          method: "tools/call",
          params: { name: "execute_code", arguments: { code: GATED, title: "task" }, task: { ttl: 600_000 } },
        },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      expect(["working", "input_required"]).toContain(created.task.status);

      // While a human decides, the task says so, with the link to the request.
      const waiting = await until(
        () => first.experimental.tasks.getTask(taskId),
        (t) => t.status === "input_required",
      );
      expect(waiting.statusMessage).toContain("http://console.test/approvals/");
      await first.close();

      // A key never sees another key's task.
      const stranger = await connect(b.server.url, otherKey);
      await expect(stranger.experimental.tasks.getTask(taskId)).rejects.toThrow(/not found/i);
      await stranger.close();

      // The console, on the other instance, approves.
      const approval = await until(
        () => b.db.approval.findFirst({ where: { status: "pending", capability: "assets.save" } }),
        (r) => r !== null,
      );
      await b.engine.approvals.decide({
        approvalId: approval?.id ?? "",
        answer: "once",
        decidedBy: { userId: approverId, label: "Approver" },
      });

      // The client comes back in a new session, on the other instance, and gets the result.
      const again = await connect(b.server.url, apiKey);
      const result = await again.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.isError).toBe(false);
      expect(result.structuredContent).toMatchObject({
        ok: true,
        result: { saved: true },
        calls: [{ capability: "assets.save", decision: "allow" }],
      });
      expect((await again.experimental.tasks.getTask(taskId)).status).toBe("completed");
      const listed = await again.experimental.tasks.listTasks();
      expect(listed.tasks.map((t) => t.taskId)).toContain(taskId);
      await again.close();
    }, 90_000);

    it("[MCP]: a client that supports URL elicitation is offered the approval page", async () => {
      const [a, b] = instances as [Instance, Instance];
      const client = new Client(
        { name: "url-client", version: "1.0.0" },
        { capabilities: { elicitation: { url: {} } } },
      );
      const offered: { mode?: string; url?: string; elicitationId?: string }[] = [];
      const completed: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        offered.push(request.params as (typeof offered)[number]);
        return { action: "accept" };
      });
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) => {
        completed.push(n.params.elicitationId);
      });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(a.server.url), {
          requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
        }),
      );
      const calling = client.callTool(
        { name: "execute_code", arguments: { code: GATED } },
        CallToolResultSchema,
        {
          timeout: 60_000,
        },
      );
      await until(
        async () => offered.length,
        (n) => n > 0,
      );
      const approvalId = offered[0]?.elicitationId ?? "";
      // URL mode only: this client did not declare form mode, so it gets no deny-only form.
      expect(offered).toEqual([
        expect.objectContaining({
          mode: "url",
          url: `http://console.test/approvals/${approvalId}`,
          elicitationId: approvalId,
        }),
      ]);
      // Accepting only means the person went to the page: the request still waits for the console.
      expect((await b.db.approval.findUnique({ where: { id: approvalId } }))?.status).toBe("pending");
      await b.engine.approvals.decide({
        approvalId,
        answer: "once",
        decidedBy: { userId: approverId, label: "Approver" },
      });
      const result = await calling;
      expect(result.structuredContent).toMatchObject({ ok: true });
      await until(
        async () => completed,
        (c) => c.includes(approvalId),
      );
      await client.close();
    }, 90_000);

    it("[DURABLE]: a task whose run parked is cancelled from another instance: its run ends cancelled and its request leaves the queue", async () => {
      const [a, b] = instances as [Instance, Instance];
      const first = await connect(a.server.url, apiKey);
      const created = await first.request(
        {
          method: "tools/call",
          params: {
            name: "execute_code",
            arguments: { code: GATED, title: "parked" },
            task: { ttl: 600_000 },
          },
        },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      await first.close();
      // The hot window (3 s) runs out: the run is a row, and the process that started it lets go.
      const parked = await until(
        () => a.db.actionRun.findFirst({ where: { mcpRequestId: `task:${taskId}` } }),
        (r) => r?.status === "waiting",
      );
      const other = await connect(b.server.url, apiKey);
      await other.experimental.tasks.cancelTask(taskId);
      const ended = await until(
        () => b.db.actionRun.findUnique({ where: { id: parked?.id ?? "" } }),
        (r) => r?.status === "error",
      );
      expect(ended?.errorKind).toBe("cancelled");
      expect((await other.experimental.tasks.getTask(taskId)).status).toBe("cancelled");
      expect(await b.db.approval.count({ where: { runId: parked?.id ?? "", status: "pending" } })).toBe(0);
      await other.close();
    }, 60_000);

    it("[MCP]: a client that does not ask for a task keeps the request-bound call", async () => {
      const [a] = instances as [Instance, Instance];
      const client = await connect(a.server.url, apiKey);
      const calling = client.callTool(
        { name: "execute_code", arguments: { code: GATED } },
        CallToolResultSchema,
        { timeout: 60_000 },
      );
      const approval = await until(
        () => a.db.approval.findFirst({ where: { status: "pending", capability: "assets.save" } }),
        (r) => r !== null,
      );
      await a.engine.approvals.decide({
        approvalId: approval?.id ?? "",
        answer: "once",
        decidedBy: { userId: approverId, label: "Approver" },
      });
      const result = await calling;
      expect(result.structuredContent).toMatchObject({ ok: true, result: { saved: true } });
      expect(await a.db.mcpTask.count({ where: { status: "working" } })).toBe(0);
      await client.close();
    }, 90_000);
  });
}

suite("MCP tasks over SQLite", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-mcp-tasks-"));
  return {
    target: { provider: "sqlite", url: path.join(dir, "tasks.db") },
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});

const pgBase = process.env.TOOLSTORE_TEST_POSTGRES_URL;
if (pgBase) {
  suite("MCP tasks over PostgreSQL (two instances, one database)", async () => {
    const name = `toolstore_tasks_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
    const admin = new pg.Client(pgConfigFromUrl(pgBase));
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const u = new URL(pgBase);
    u.pathname = `/${name}`;
    return {
      target: { provider: "postgresql", url: u.toString() },
      drop: async () => {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await admin.end();
      },
    };
  });
}
