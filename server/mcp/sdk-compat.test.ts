import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkSdkCompat, installedSdkVersion, runUntaskedCallsDirectly } from "./sdk-compat";

describe("MCP SDK compatibility", () => {
  it("[MCP]: the installed SDK passes, an untested version stops the start with a clear message", () => {
    expect(installedSdkVersion()).toMatch(/^1\.32\./);
    expect(() => checkSdkCompat()).not.toThrow();
    expect(() => checkSdkCompat("1.40.0")).toThrow(/1\.40\.0 is not a version .* npm ci/);
  });

  it("[MCP]: a call without task augmentation to a task-capable tool runs the direct handler, not a polled task", async () => {
    const taskStore = new InMemoryTaskStore();
    const server = new McpServer(
      { name: "probe", version: "0" },
      { taskStore, capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } } },
    );
    let tasksCreated = 0;
    server.experimental.tasks.registerToolTask(
      "echo",
      { inputSchema: { text: z.string() }, execution: { taskSupport: "optional" } },
      {
        createTask: async (_args, extra) => {
          tasksCreated += 1;
          const task = await extra.taskStore.createTask({ ttl: 60_000 });
          await extra.taskStore.storeTaskResult(task.taskId, "completed", {
            content: [{ type: "text", text: "polled" }],
          });
          return { task };
        },
        getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args, extra) =>
          (await extra.taskStore.getTaskResult(extra.taskId)) as { content: [] },
      },
    );
    const seen: unknown[] = [];
    runUntaskedCallsDirectly(server, async (args, extra) => {
      seen.push([args, typeof extra.requestId]);
      return { content: [{ type: "text", text: `direct: ${String(args.text)}` }] };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "probe-client", version: "1" });
    await client.connect(clientSide);
    try {
      const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
      expect(result.content).toEqual([{ type: "text", text: "direct: hi" }]);
      expect(seen).toEqual([[{ text: "hi" }, "number"]]);
      expect(tasksCreated).toBe(0);
    } finally {
      await client.close();
      taskStore.cleanup();
    }
  });
});
