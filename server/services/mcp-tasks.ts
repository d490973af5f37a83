/**
 * MCP tasks (the SDK's experimental TaskStore) in the database, so that a client that ran
 * execute_code as a task can disconnect, come back in a new MCP session, and poll its status or
 * fetch its result on any instance. A task is bound to the API key that created it: another key
 * is told it does not exist, whichever session asks. A task records the process that runs it, and
 * its run carries `mcpRequestId = "task:<id>"`: when that process dies, recovery on any instance
 * ends the task from what its run says (endOrphanedTasks), so it never stays `working`.
 */
import { randomUUID } from "node:crypto";
import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { CallToolResult, Result, Task } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ObservationEnvelope } from "../core/actions/envelope";
import { UNFINISHED_STATUSES } from "../core/actions/ports";
import type { RunLifecycle, RunRef } from "../core/actions/run-action";
import type { Db, Prisma } from "../db";

const TASK_POLL_INTERVAL_MS = 1000;
/** Results are kept a day unless the client asks for less; a client that comes back later gets NOT_FOUND. */
const TASK_MAX_TTL_MS = 24 * 60 * 60_000;
const PAGE = 50;
const TERMINAL = new Set(["completed", "failed", "cancelled"]);
const OPEN = ["working", "input_required"];

export const RUN_RESOURCE_PREFIX = "toolstore://runs/";
/** Where execute_code's result names its run. */
export const RUN_META_KEY = "toolstore/runId";

/** The `mcpRequestId` of the run a task started: the run row itself links back to its task. */
export function taskRunRequestId(taskId: string): string {
  return `task:${taskId}`;
}

/** The execute_code result of an envelope: the JSON as text and as structured content. */
export function envelopeResult(envelope: ObservationEnvelope, runId?: string): CallToolResult {
  return {
    content: [{ type: "text" as const, text: JSON.stringify(envelope, null, 2) }],
    structuredContent: envelope as unknown as Record<string, unknown>,
    isError: !envelope.ok,
    ...(runId ? { _meta: { [RUN_META_KEY]: runId } } : {}),
  };
}

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

export interface TaskStoreHooks {
  /**
   * A client cancelled a task whose run is not over: cancel the run (it may be parked, with no
   * process holding the task).
   */
  cancelled?(runId: string): Promise<void>;
}

/** `instanceId`: the engine instance of this process, which runs the tasks created here. */
export function createMcpTaskStore(
  db: Db,
  apiKeyId: string,
  instanceId: () => Promise<string>,
  hooks: TaskStoreHooks = {},
): TaskStore {
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
          instanceId: await instanceId(),
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
      const { count } = await db.mcpTask.updateMany({
        where: { id: taskId, apiKeyId, status: { notIn: [...TERMINAL] } },
        data: { status, statusMessage: statusMessage ?? null },
      });
      if (status !== "cancelled" || count === 0 || !hooks.cancelled) return;
      const run = await db.actionRun.findFirst({
        where: {
          mcpRequestId: taskRunRequestId(taskId),
          apiKeyId,
          status: { in: [...UNFINISHED_STATUSES] },
        },
        select: { id: true },
      });
      if (run) await hooks.cancelled(run.id);
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

/** How a task ends when its process died: from its run's final state, or with nothing run. */
function orphanEnd(
  taskId: string,
  run: { id: string; status: string; envelope: string | null } | null,
): { status: "completed" | "failed"; statusMessage: string | null; result: string } {
  const envelope = run?.envelope ? (JSON.parse(run.envelope) as ObservationEnvelope) : null;
  if (!run || !envelope) {
    return {
      status: "failed",
      statusMessage: `The server process running task ${taskId} stopped before its action started; nothing ran.`,
      result: JSON.stringify({
        content: [
          { type: "text", text: "execute_code failed: the server process stopped before the action started" },
        ],
        isError: true,
      } satisfies CallToolResult),
    };
  }
  if (run.status !== "interrupted") {
    // The action ended; the process died before the task recorded its result.
    return {
      status: "completed",
      statusMessage: null,
      result: JSON.stringify(envelopeResult(envelope, run.id)),
    };
  }
  const outcomes = new Map<string, number>();
  for (const call of envelope.calls) {
    const outcome = call.outcome ?? "unknown";
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }
  const calls = outcomes.size ? [...outcomes].map(([outcome, n]) => `${n} ${outcome}`).join(", ") : "none";
  return {
    status: "failed",
    statusMessage: `Interrupted: the server process running this action stopped before it finished. Calls by outcome: ${calls} (\`unknown\`: let through, never reported back, so its side effect may have happened). The run and the calls that had completed: ${RUN_RESOURCE_PREFIX}${run.id}`,
    result: JSON.stringify(envelopeResult(envelope, run.id)),
  };
}

/**
 * Recovery for MCP tasks, after the runs' own (recoverAfterRestart marks a dead process's runs
 * `interrupted` first): every open task whose process is gone ends from its run, so a client
 * polling tasks/get on another instance or after a restart learns the truth. A task whose run
 * still says running waits for the next sweep. Tasks without an instance (created before tasks
 * recorded their process) are left alone: nothing links them to a run. Returns how many tasks it ended.
 */
export async function endOrphanedTasks(
  db: Db,
  deps: { instanceId: string; isInstanceAlive(instanceId: string): Promise<boolean> | boolean },
): Promise<number> {
  const open = await db.mcpTask.findMany({
    where: {
      status: { in: OPEN },
      AND: [{ instanceId: { not: null } }, { instanceId: { not: deps.instanceId } }],
    },
    select: { id: true, apiKeyId: true, instanceId: true },
    orderBy: { createdAt: "asc" },
    take: 200,
  });
  const alive = new Map<string, boolean>();
  let ended = 0;
  for (const task of open) {
    const owner = task.instanceId ?? "";
    if (!alive.has(owner)) alive.set(owner, await deps.isInstanceAlive(owner));
    if (alive.get(owner)) continue;
    const run = await db.actionRun.findFirst({
      where: { mcpRequestId: taskRunRequestId(task.id), apiKeyId: task.apiKeyId },
      select: { id: true, status: true, envelope: true },
    });
    // A run another instance took over (or a parked one) still ends the task itself.
    if (run && (run.status === "running" || run.status === "queued" || run.status === "waiting")) continue;
    const { count } = await db.mcpTask.updateMany({
      where: { id: task.id, status: { in: OPEN } },
      data: orphanEnd(task.id, run),
    });
    ended += count;
  }
  return ended;
}

/** The task a run was started by, if any (ActionRun.mcpRequestId = "task:<id>"). */
function taskOf(run: RunRef): string | null {
  const prefix = taskRunRequestId("");
  return run.mcpRequestId?.startsWith(prefix) ? run.mcpRequestId.slice(prefix.length) : null;
}

/**
 * MCP tasks follow their runs on whichever instance the run is resumed: parked ->
 * input_required, resumed -> working (owned by the instance that resumed it), finished ->
 * completed with the run's envelope. Only the run's lease holder reports, so a run and its task
 * agree.
 */
export function taskLifecycle(db: Db): RunLifecycle {
  const update = async (run: RunRef, data: Prisma.McpTaskUpdateManyMutationInput) => {
    const taskId = taskOf(run);
    if (!taskId) return;
    await db.mcpTask.updateMany({ where: { id: taskId, status: { in: OPEN } }, data });
  };
  return {
    parked: (run, approvalId) =>
      update(run, {
        status: "input_required",
        statusMessage: `Waiting for a human to answer approval ${approvalId}; the action resumes on any instance once answered (${RUN_RESOURCE_PREFIX}${run.id})`,
      }),
    resumed: (run) => update(run, { status: "working", statusMessage: null, instanceId: run.instanceId }),
    finished: (run, envelope) =>
      update(run, {
        status: "completed",
        statusMessage: null,
        result: JSON.stringify(envelopeResult(envelope, run.id)),
      }),
  };
}

/**
 * Which of the tasks this process runs a client cancelled: one query a tick for all of them
 * (a gateway with 10,000 tasks waiting on humans polls 20 times a second, not 10,000).
 */
export function createTaskCancelWatch(db: Db, pollMs = TASK_POLL_INTERVAL_MS) {
  const watched = new Map<string, () => void>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  async function poll(): Promise<void> {
    const ids = [...watched.keys()];
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await db.mcpTask.findMany({
        where: { id: { in: ids.slice(i, i + 500) }, status: "cancelled" },
        select: { id: true },
      });
      for (const { id } of rows) {
        watched.get(id)?.();
        watched.delete(id);
      }
    }
  }
  function schedule(): void {
    if (timer || watched.size === 0) return;
    timer = setTimeout(() => {
      void poll()
        .catch(() => undefined)
        .finally(() => {
          timer = undefined;
          schedule();
        });
    }, pollMs);
    timer.unref?.();
  }
  return {
    watch(taskId: string, onCancel: () => void): () => void {
      watched.set(taskId, onCancel);
      schedule();
      return () => {
        watched.delete(taskId);
      };
    },
  };
}
