/**
 * An MCP task whose server process is killed (kill -9 of a REAL server, scripts/fault-serve.ts)
 * while its action waits on a human, after one call already ran. The action is durable: the
 * restarted process (SQLite) or the other instance (PostgreSQL) takes the run over and replays it
 * up to the call that waits; tasks/get still says `input_required` from a new session; once the
 * human allows the call the task completes with the result, and each side effect happened once.
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

    it("[MCP]: the task stays input_required across the kill, and completes after the approval, each call once", async () => {
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
      // The action is durable: taken over and replayed up to the call that waits, it still waits.
      const run = await until(
        () => db.actionRun.findFirst({ where: { title: "two posts" } }),
        (r) => r?.status === "waiting",
        SETTLE_MS,
      );
      expect(run?.status).toBe("waiting");
      // (While the replay runs up to that call the task says `working`, then `input_required` again.)
      const again = await until(
        () => reader.experimental.tasks.getTask(taskId),
        (t) => t.status === "input_required",
        SETTLE_MS,
      );
      expect(again.status).toBe("input_required");
      const second = await pendingApproval("second");
      expect(second?.id).toBe(run?.waitingFor);
      await b.approvals.decide({
        approvalId: second?.id ?? "",
        answer: "once",
        decidedBy: { userId, label: "alice" },
      });
      const task = await until(
        () => reader.experimental.tasks.getTask(taskId),
        (t) => t.status !== "working" && t.status !== "input_required",
        SETTLE_MS,
      );
      expect(task.status).toBe("completed");
      const result = await reader.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.isError).toBe(false);
      expect(result._meta?.[RUN_META_KEY]).toBe(run?.id);
      expect(result.structuredContent).toMatchObject({
        ok: true,
        result: "both sent",
        calls: [
          { capability: "http.fetch", decision: "allow", replayed: true },
          { capability: "http.fetch", decision: "allow" },
        ],
      });
      // Each post happened exactly once: the first is answered from the journal on the replay.
      expect(receiver.hits.get("first")).toBe(1);
      expect(receiver.hits.get("second")).toBe(1);
      expect(await db.approval.count({ where: { status: "pending" } })).toBe(0);
      const finished = await db.actionRun.findFirst({ where: { title: "two posts" } });
      expect(finished?.status).toBe("ok");
    }, 120_000);
  });
}
