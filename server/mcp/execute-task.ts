/**
 * execute_code as an MCP task, for a client that supports tasks: the action goes on after the
 * request returns, its state (input_required while a human decides) and result are in the
 * database, and the client polls or fetches it later from any instance, in any session. A call
 * without task augmentation keeps the direct path.
 */
import type {
  CreateTaskRequestHandlerExtra,
  TaskRequestHandlerExtra,
  TaskStore,
} from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ApiKeyIdentity } from "../services/api-keys";
import { envelopeResult, taskRunRequestId } from "../services/mcp-tasks";
import type { ExecuteHandler } from "./execute-direct";
import { type ExecuteArgs, executeInputSchema, executeToolConfig, TASK_POLL_MS } from "./execute-tool";
import type { McpBackend, PendingApprovalInfo } from "./mcp-backend";
import { runUntaskedCallsDirectly } from "./sdk-compat";

interface TaskRunContext {
  store: TaskStore;
  identity: ApiKeyIdentity;
  sessionId: string;
  backend: McpBackend;
}

export function registerExecuteTask(
  server: McpServer,
  options: TaskRunContext & { toolDescription: string; executeDirect: ExecuteHandler },
): void {
  const { executeDirect, toolDescription, ...context } = options;
  server.experimental.tasks.registerToolTask(
    "execute_code",
    { ...executeToolConfig(toolDescription), execution: { taskSupport: "optional" as const } },
    {
      // The task API types its arguments `unknown` for a schema object; the SDK parsed them with it.
      createTask: async (args: unknown, extra: CreateTaskRequestHandlerExtra) => {
        const task = await extra.taskStore.createTask({
          ttl: extra.taskRequestedTtl ?? null,
          pollInterval: TASK_POLL_MS,
        });
        void runAsTask(context, task.taskId, args as ExecuteArgs);
        return { task };
      },
      getTask: (_args: unknown, extra: TaskRequestHandlerExtra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: (_args: unknown, extra: TaskRequestHandlerExtra) =>
        extra.taskStore.getTaskResult(extra.taskId) as Promise<CallToolResult>,
    },
  );
  runUntaskedCallsDirectly(server, async (args, extra) => {
    const parsed = executeInputSchema.safeParse(args);
    if (!parsed.success) {
      return {
        content: [{ type: "text" as const, text: `Input validation error: ${parsed.error.message}` }],
        isError: true,
      };
    }
    return executeDirect(parsed.data, extra);
  });
}

/** The task's run: not tied to any request; its status and result go to the task store. */
export async function runAsTask(
  { store, identity, sessionId, backend }: TaskRunContext,
  taskId: string,
  args: ExecuteArgs,
): Promise<void> {
  const controller = new AbortController();
  const waiting = new Map<string, PendingApprovalInfo>();
  const cancelled = () => controller.abort("the client cancelled the task");
  const unwatch =
    backend.watchTaskCancel?.(taskId, cancelled) ??
    (() => {
      const timer = setInterval(() => {
        void store.getTask(taskId).then(
          (t) => t?.status === "cancelled" && cancelled(),
          () => undefined,
        );
      }, TASK_POLL_MS);
      return () => clearInterval(timer);
    })();
  const waitingMessage = () =>
    [...waiting.values()]
      .map((i) => `Waiting for approval of ${i.capability} (${i.category}) at ${backend.approvalUrl(i.id)}`)
      .join("; ");
  let runId: string | undefined;
  try {
    const { envelope, parked } = await backend.execute({
      ...args,
      identity,
      sessionId,
      // The run row links back to its task, so recovery can end the task if this process dies.
      requestId: taskRunRequestId(taskId),
      signal: controller.signal,
      onRunStarted(id) {
        runId = id;
      },
      onApprovalPending(info) {
        waiting.set(info.id, info);
        void store.updateTaskStatus(taskId, "input_required", waitingMessage()).catch(() => undefined);
      },
      onApprovalSettled(id) {
        waiting.delete(id);
        const next = waiting.size ? "input_required" : "working";
        void store
          .updateTaskStatus(taskId, next, waiting.size ? waitingMessage() : undefined)
          .catch(() => undefined);
      },
      // A parked run is a row: this process keeps nothing of the task while a human decides.
      detachOnPark: true,
    });
    // The task follows its run from here (input_required now; completed when a replay finishes).
    if (parked) return;
    await store.storeTaskResult(taskId, "completed", envelopeResult(envelope, runId));
  } catch (error) {
    await store
      .storeTaskResult(taskId, "failed", {
        content: [{ type: "text" as const, text: `execute_code failed: ${(error as Error).message}` }],
        isError: true,
      })
      .catch(() => undefined);
  } finally {
    unwatch();
  }
}
