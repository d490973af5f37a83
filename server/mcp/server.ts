/**
 * The MCP server of one request: exactly two tools (execute_code, view_image) and one resource
 * (toolstore://capabilities), for one API key and one MCP session. It adds no behaviour of its
 * own: actions, approvals and images all come from the backend.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { ApiKeyIdentity } from "../services/api-keys";
import { createExecuteDirect } from "./execute-direct";
import { registerExecuteTask } from "./execute-task";
import { executeToolConfig, TASK_POLL_MS } from "./execute-tool";
import type { McpBackend } from "./mcp-backend";
import { registerRunResource } from "./run-resource";
import { createSharedSchemaValidator } from "./schema-validator";
import { registerSkillResources } from "./skill-resources";

const SERVER_INFO = { name: "toolstore", version: "0.1.0" };
/** Shared by every per-request server: the SDK would build an Ajv instance for each. */
const schemaValidator = createSharedSchemaValidator();
/** Built once: a server is built per HTTP request, and zod schemas are costly to construct. */
const viewImageInputSchema = z.object({ asset_id: z.string().min(1).max(100) });

export async function createMcpServer(options: {
  identity: ApiKeyIdentity;
  sessionId: string;
  backend: McpBackend;
}): Promise<McpServer> {
  const { identity, sessionId, backend } = options;
  const { toolDescription, capabilities } = await backend.describe(identity);
  const tasks = backend.taskStore?.(identity);
  const server = new McpServer(SERVER_INFO, {
    jsonSchemaValidator: schemaValidator,
    ...(tasks ? { taskStore: tasks, defaultTaskPollInterval: TASK_POLL_MS } : {}),
    capabilities: {
      tools: {},
      resources: {},
      ...(tasks ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
    },
    instructions:
      "ToolStore runs JavaScript actions that import capability modules. Call execute_code with one ES module; read toolstore://capabilities for the mounted modules.",
  });

  const executeDirect = createExecuteDirect({ server, identity, sessionId, backend });
  if (tasks) {
    registerExecuteTask(server, {
      store: tasks,
      identity,
      sessionId,
      backend,
      toolDescription,
      executeDirect,
    });
  } else {
    server.registerTool("execute_code", executeToolConfig(toolDescription), executeDirect);
  }

  server.registerTool(
    "view_image",
    {
      title: "View an image",
      description:
        "Returns an image an action saved (its asset_id comes from the envelope's images or from toolstore/assets). Only images of this key's user are served.",
      inputSchema: viewImageInputSchema,
    },
    async ({ asset_id }) => {
      const image = await backend.image(identity, asset_id);
      if (!image) {
        return {
          content: [{ type: "text", text: `No image with asset_id "${asset_id}" is visible to this key.` }],
          isError: true,
        };
      }
      return { content: [{ type: "image", data: image.base64, mimeType: image.mime }] };
    },
  );

  server.registerResource(
    "capabilities",
    "toolstore://capabilities",
    {
      title: "Mounted capabilities",
      description: "Modules, exports, descriptions, categories and input schemas mounted for this API key.",
      mimeType: "application/json",
    },
    async (uri) => ({
      contents: [
        { uri: uri.href, mimeType: "application/json", text: JSON.stringify(capabilities, null, 2) },
      ],
    }),
  );

  registerSkillResources(server, backend.skills?.(identity) ?? null);
  registerRunResource(server, identity, backend);

  return server;
}
