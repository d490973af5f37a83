import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { afterEach, describe, expect, it } from "vitest";
import type { ObservationEnvelope } from "../core/actions/envelope";
import type { ApiKeyIdentity } from "../services/api-keys";
import { RUN_META_KEY } from "../services/mcp-tasks";
import { runAsTask } from "./execute-task";
import type { McpBackend, PendingApprovalInfo } from "./mcp-backend";

const identity: ApiKeyIdentity = {
  id: "key_1",
  name: "agent",
  userId: "user_1",
  username: "ada",
  mode: "default",
  modules: ["*"],
};
const envelope: ObservationEnvelope = {
  ok: true,
  result: 42,
  logs: [],
  calls: [],
  images: [],
  durationMs: 3,
} as unknown as ObservationEnvelope;
const pending: PendingApprovalInfo = {
  id: "appr_1",
  capability: "fs.write_file",
  category: "write",
  argsPreview: "{}",
  expiresAt: Date.now() + 60_000,
};

let store: InMemoryTaskStore;
afterEach(() => store?.cleanup());

async function newTask(): Promise<string> {
  store = new InMemoryTaskStore();
  const task = await store.createTask({ ttl: 60_000 }, 1, { method: "tools/call", params: {} });
  return task.taskId;
}

function backendWith(execute: McpBackend["execute"]): McpBackend {
  return {
    execute,
    approvalUrl: (id: string) => `https://ts.example/approvals#${id}`,
  } as unknown as McpBackend;
}

describe("execute_code as a task", () => {
  it("[MCP]: the task says input_required with the approval's link while a human decides, then completes with the run", async () => {
    const taskId = await newTask();
    const statuses: (string | undefined)[][] = [];
    const backend = backendWith(async (input) => {
      expect(input.requestId).toBe(`task:${taskId}`);
      input.onRunStarted?.("run_9");
      input.onApprovalPending(pending);
      await new Promise((resolve) => setTimeout(resolve, 10));
      const t = await store.getTask(taskId);
      statuses.push([t?.status, t?.statusMessage]);
      input.onApprovalSettled(pending.id);
      await new Promise((resolve) => setTimeout(resolve, 10));
      statuses.push([(await store.getTask(taskId))?.status]);
      return { envelope };
    });
    await runAsTask({ store, identity, sessionId: "s1", backend }, taskId, {
      code: "export default () => 42",
    });
    expect(statuses).toEqual([
      [
        "input_required",
        "Waiting for approval of fs.write_file (write) at https://ts.example/approvals#appr_1",
      ],
      ["working"],
    ]);
    expect((await store.getTask(taskId))?.status).toBe("completed");
    const result = await store.getTaskResult(taskId);
    expect(result._meta).toEqual({ [RUN_META_KEY]: "run_9" });
    expect(result.structuredContent).toMatchObject({ ok: true, result: 42 });
  });

  it("[MCP]: a task the client cancels aborts its run; a run that throws fails the task with the message", async () => {
    const taskId = await newTask();
    let aborted: unknown;
    const backend = backendWith(
      (input) =>
        new Promise((_resolve, reject) => {
          input.signal.addEventListener("abort", () => {
            aborted = input.signal.reason;
            reject(new Error("cancelled"));
          });
          void store.updateTaskStatus(taskId, "cancelled");
        }),
    );
    await runAsTask({ store, identity, sessionId: "s1", backend }, taskId, { code: "x" });
    expect(aborted).toBe("the client cancelled the task");

    const failing = await newTask();
    await runAsTask(
      {
        store,
        identity,
        sessionId: "s1",
        backend: backendWith(async () => {
          throw new Error("engine down");
        }),
      },
      failing,
      { code: "x" },
    );
    expect((await store.getTask(failing))?.status).toBe("failed");
    expect((await store.getTaskResult(failing)).content).toEqual([
      { type: "text", text: "execute_code failed: engine down" },
    ]);
  });

  it("[DURABLE]: once its run parks the task keeps nothing here: it stops watching for a cancel and leaves the result to the run", async () => {
    const taskId = await newTask();
    let detach: boolean | undefined;
    let watching = 0;
    const backend = {
      ...backendWith(async (input) => {
        detach = input.detachOnPark;
        input.onApprovalPending(pending);
        return { envelope, parked: { approvalId: pending.id } };
      }),
      watchTaskCancel: () => {
        watching += 1;
        return () => {
          watching -= 1;
        };
      },
    } as McpBackend;
    await runAsTask({ store, identity, sessionId: "s1", backend }, taskId, { code: "x" });
    expect(detach).toBe(true);
    expect(watching).toBe(0);
    // Still waiting for the human: the placeholder envelope is not the task's result.
    expect((await store.getTask(taskId))?.status).toBe("input_required");
    await expect(store.getTaskResult(taskId)).rejects.toThrow();
  });
});
