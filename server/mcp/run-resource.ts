/**
 * The `toolstore://runs/{runId}` resource template: a run's state and, once it ended, its
 * envelope, so a client whose connection (or server) died can learn whether its side effects
 * happened. Only the key's own runs are visible; any other id reads as unknown.
 */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ApiKeyIdentity } from "../services/api-keys";
// Defined beside the task store, which names the run in an interrupted task's status.
import { RUN_RESOURCE_PREFIX } from "../services/mcp-tasks";
import type { McpBackend } from "./mcp-backend";

const LISTED_RUNS = 20;
/** JSON-RPC "resource not found" (the MCP spec's code for an unknown URI). */
const RESOURCE_NOT_FOUND = -32002;

export function registerRunResource(server: McpServer, identity: ApiKeyIdentity, backend: McpBackend): void {
  server.registerResource(
    "run",
    new ResourceTemplate(`${RUN_RESOURCE_PREFIX}{runId}`, {
      list: async () => ({
        resources: (await backend.recentRuns(identity, LISTED_RUNS)).map((r) => ({
          uri: `${RUN_RESOURCE_PREFIX}${r.id}`,
          name: `run ${r.id}`,
          title: `${r.title || "Action"} (${r.status})`,
          mimeType: "application/json",
        })),
      }),
    }),
    {
      title: "Action run",
      description:
        "State of one of this key's action runs (running, ok, error, interrupted) and its envelope once it ended. The run id is in the execute_code result's _meta, or in the console's run page.",
      mimeType: "application/json",
    },
    async (uri, variables) => {
      const runId = String(variables.runId ?? "");
      const state = runId ? await backend.runState(identity, decodeURIComponent(runId)) : null;
      if (!state) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: no run ${runId} of this key`);
      return {
        contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(state, null, 2) }],
      };
    },
  );
}
