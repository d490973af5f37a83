/**
 * MCP tasks (the SDK's experimental TaskStore) in the database, so that a client that ran
 * execute_code as a task can disconnect, come back in a new MCP session, and poll its status or
 * fetch its result on any instance. A task is bound to the API key that created it: another key
 * is told it does not exist, whichever session asks.
 */
import { randomUUID } from "node:crypto";
import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { Result, Task } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Db } from "../db";

export const TASK_POLL_INTERVAL_MS = 1000;
/** Results are kept a day unless the client asks for less; a client that comes back later gets NOT_FOUND. */
export const TASK_MAX_TTL_MS = 24 * 60 * 60_000;
const PAGE = 50;
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

const select = {
  id: true,
  status: true,
  statusMessage: true,
  ttlMs: true,
  pollIntervalMs: true,
  createdAt: true,
  updatedAt: true,
} as const;

type Row = {
  id: string;
  status: string;
  statusMessage: string | null;
  ttlMs: number | null;
  pollIntervalMs: number;
  createdAt: Date;
  updatedAt: Date;
};

function toTask(row: Row): Task {
  return {
    taskId: row.id,
    status: row.status as Task["status"],
    ttl: row.ttlMs,
    createdAt: row.createdAt.toISOString(),
    lastUpdatedAt: row.updatedAt.toISOString(),
    pollInterval: row.pollIntervalMs,
    ...(row.statusMessage ? { statusMessage: row.statusMessage } : {}),
  };
}

export function createMcpTaskStore(db: Db, apiKeyId: string): TaskStore {
  const live = <R extends Row>(row: R | null): R | null =>
    row && (row.ttlMs === null || row.createdAt.getTime() + row.ttlMs > Date.now()) ? row : null;
  const find = async (taskId: string) =>
    live(await db.mcpTask.findFirst({ where: { id: taskId, apiKeyId }, select }));

  return {
    async createTask(params) {
      const ttl = Math.min(params.ttl ?? TASK_MAX_TTL_MS, TASK_MAX_TTL_MS);
      const row = await db.mcpTask.create({
        data: {
          id: randomUUID(),
          apiKeyId,
          ttlMs: ttl,
          pollIntervalMs: Math.max(200, params.pollInterval ?? TASK_POLL_INTERVAL_MS),
        },
        select,
      });
      return toTask(row);
    },
    async getTask(taskId) {
      const row = await find(taskId);
      return row ? toTask(row) : null;
    },
    async storeTaskResult(taskId, status, result) {
      // Terminal states are final: a result never overwrites a cancelled task.
      await db.mcpTask.updateMany({
        where: { id: taskId, apiKeyId, status: { notIn: [...TERMINAL] } },
        data: { status, result: JSON.stringify(result), statusMessage: null },
      });
    },
    async getTaskResult(taskId) {
      const row = live(
        await db.mcpTask.findFirst({ where: { id: taskId, apiKeyId }, select: { ...select, result: true } }),
      );
      if (!row) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
      if (!row.result) throw new McpError(ErrorCode.InvalidRequest, `Task ${taskId} has no result yet`);
      return JSON.parse(row.result) as Result;
    },
    async updateTaskStatus(taskId, status, statusMessage) {
      await db.mcpTask.updateMany({
        where: { id: taskId, apiKeyId, status: { notIn: [...TERMINAL] } },
        data: { status, statusMessage: statusMessage ?? null },
      });
    },
    async listTasks(cursor) {
      const rows = await db.mcpTask.findMany({
        where: { apiKeyId, ...(cursor ? { id: { lt: cursor } } : {}) },
        orderBy: { id: "desc" },
        take: PAGE + 1,
        select,
      });
      const tasks = rows.slice(0, PAGE).flatMap((r) => (live(r) ? [toTask(r)] : []));
      return rows.length > PAGE ? { tasks, nextCursor: rows[PAGE - 1]?.id } : { tasks };
    },
  };
}

/** Whether a task was cancelled (tasks/cancel) while its action ran: the action is stopped then. */
export async function isTaskCancelled(db: Db, taskId: string): Promise<boolean> {
  const row = await db.mcpTask.findUnique({ where: { id: taskId }, select: { status: true } });
  return row?.status === "cancelled";
}
