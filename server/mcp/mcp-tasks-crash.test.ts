/**
 * An MCP task whose server process is killed (kill -9 of a REAL server, scripts/fault-serve.ts)
 * while its action waits on a human, after one call already ran. Once recovery has marked the run
 * `interrupted` (the restarted process on SQLite, the other instance's sweep on PostgreSQL), the
 * SDK client's tasks/get says `failed` and names the interruption and the run, and tasks/result
 * gives the interrupted envelope with the call that had completed. Before, the task stayed
 * `input_required` forever.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { type ServerEngine, startServerEngine } from "../engine";
import {
  freePort,
  kill9,
  mcpClient,
  postgresScratch,
  type Receiver,
  type ScratchDatabase,
  type ServedProcess,
  spawnServer,
  sqliteScratch,
  startReceiver,
  until,
} from "../engine/testing/served-process";
import { createInstanceChannel, type InstanceChannel } from "../infra/instance-channel";
import { createApiKey } from "../services/api-keys";
import { RUN_META_KEY } from "../services/mcp-tasks";
import { createMcpHttpHandler } from "./http";
import { createMcpBackend } from "./mcp-backend";
import { serveFetchHandler } from "./node-adapter";

const HEARTBEAT_MS = 1_000;
/** Generous: the bound only keeps a broken build from hanging; recovery takes a few beats. */
const SETTLE_MS = 30_000;
const pgBase = process.env.TOOLSTORE_TEST_POSTGRES_URL;

const action = (receiverUrl: string) => `import { fetch } from "toolstore/http";
export default async function () {
  await fetch({ url: "${receiverUrl}/hit?trial=first", method: "POST", body: "1" });
  await fetch({ url: "${receiverUrl}/hit?trial=second", method: "POST", body: "2" });
  return "both sent";
}`;

const backends: { label: string; restart: boolean; make: () => Promise<ScratchDatabase> }[] = [
  {
    label: "SQLite, restart on the same address",
    restart: true,
    make: async () => sqliteScratch("task-kill"),
  },
  ...(pgBase
    ? [
        {
          label: "PostgreSQL, the other instance finalizes",
          restart: false,
          make: () => postgresScratch(pgBase, "toolstore_task_kill"),
        },
      ]
    : []),
];

for (const backend of backends) {
  describe.sequential(`MCP task of a killed server (${backend.label})`, () => {
    let scratch: ScratchDatabase;
    let db: Db;
    let channel: InstanceChannel;
    let b: ServerEngine;
    let bMcp: { url: string; close(): Promise<void> };
    let receiver: Receiver;
    let apiKey = "";
    let userId = "";
    let a: ServedProcess | undefined;
    const clients: Client[] = [];

    beforeAll(async () => {
      scratch = await backend.make();
      await deployMigrations(scratch.target);
      db = createDb(scratch.target);
      channel = createInstanceChannel(scratch.target);
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
    }, 60_000);

    afterAll(async () => {
      for (const c of clients) await c.close().catch(() => undefined);
      if (a) await kill9(a.child);
      await receiver?.close();
      await bMcp?.close();
      await b?.shutdown();
      await channel?.close();
      await db?.$disconnect();
      await scratch?.drop();
    });

    const pendingApproval = (trial: string) =>
      until(
        () =>
          db.approval.findFirst({
            where: { status: "pending", argsSnapshot: { contains: `trial=${trial}` } },
          }),
        (r) => r !== null,
        SETTLE_MS,
      );

    it("[MCP]: tasks/get reports the task failed, naming the interruption and its run, once recovery ran", async () => {
      const port = await freePort();
      const env = { TOOLSTORE_HEARTBEAT_MS: String(HEARTBEAT_MS), TOOLSTORE_APPROVAL_TTL_MINUTES: "1" };
      a = await spawnServer(scratch.url, port, env);
      const client = await mcpClient(a.url, apiKey, "task-client");
      clients.push(client);
      const created = await client.request(
        {
          method: "tools/call",
          params: {
            name: "execute_code",
            arguments: { code: action(receiver.url), title: "two posts" },
            task: { ttl: 600_000 },
          },
        },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;

      // The first call is allowed and runs; the second waits on a human when the server dies.
      const first = await pendingApproval("first");
      await b.approvals.decide({
        approvalId: first?.id ?? "",
        answer: "once",
        decidedBy: { userId, label: "alice" },
      });
      expect(await pendingApproval("second")).not.toBeNull();
      const waiting = await until(
        () => client.experimental.tasks.getTask(taskId),
        (t) => t.status === "input_required" && (t.statusMessage ?? "").includes("http.fetch"),
        SETTLE_MS,
      );
      expect(waiting.status).toBe("input_required");

      await kill9(a.child);
      a = backend.restart ? await spawnServer(scratch.url, port, env) : undefined;

      // Another session, on a live instance: the restarted process, or the other instance.
      const reader = await mcpClient(a?.url ?? bMcp.url, apiKey, "task-client-again");
      clients.push(reader);
      const task = await until(
        () => reader.experimental.tasks.getTask(taskId),
        (t) => t.status !== "working" && t.status !== "input_required",
        SETTLE_MS,
      );
      const run = await db.actionRun.findFirst({ where: { title: "two posts" } });
      expect(run?.status).toBe("interrupted");
      expect(task.status).toBe("failed");
      expect(task.statusMessage).toContain("Interrupted");
      expect(task.statusMessage).toContain("1 completed");
      expect(task.statusMessage).toContain(`toolstore://runs/${run?.id}`);

      const result = await reader.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.isError).toBe(true);
      expect(result._meta?.[RUN_META_KEY]).toBe(run?.id);
      expect(result.structuredContent).toMatchObject({
        ok: false,
        error: { kind: "interrupted" },
        calls: [{ capability: "http.fetch", decision: "allow", outcome: "completed" }],
      });
      // The first post happened once; the second, never approved, never did.
      expect(receiver.hits.get("first")).toBe(1);
      expect(receiver.hits.get("second")).toBeUndefined();
      expect(await db.approval.count({ where: { status: "pending" } })).toBe(0);
    }, 120_000);
  });
}
