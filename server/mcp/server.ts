/**
 * The MCP server of one request: exactly two tools (execute_code, view_image) and one resource
 * (toolstore://capabilities), for one API key and one MCP session. It adds no behaviour of its
 * own: actions, approvals and images all come from the backend.
 */
import type {
  CreateTaskRequestHandlerExtra,
  TaskRequestHandlerExtra,
  TaskStore,
} from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import * as zMini from "zod/v4-mini";
import type { ObservationEnvelope } from "../core/actions/envelope";
import type { ApprovalAnswer } from "../core/gate/approvals";
import type { ApiKeyIdentity } from "../services/api-keys";
import type { McpBackend, PendingApprovalInfo } from "../services/mcp-backend";
import { envelopeResult, RUN_RESOURCE_PREFIX, taskRunRequestId } from "../services/mcp-tasks";
import { registerRunResource } from "./run-resource";
import { createSharedSchemaValidator } from "./schema-validator";
import { registerSkillResources } from "./skill-resources";

const SERVER_INFO = { name: "toolstore", version: "0.1.0" };
export const ELICIT_META_KEY = "toolstore/approvalId";
/** Answers a client's prompt can give. Approving is the console's: a key never approves its own request. */
export const ELICIT_ANSWERS: Record<string, ApprovalAnswer> = { deny: "deny" };
const elicitResultSchema = z.object({
  action: z.string(),
  content: z.object({ decision: z.string().optional() }).loose().optional(),
});
const PROGRESS_EVERY_MS = 5_000;
/** Shared by every per-request server: the SDK would build an Ajv instance for each. */
const schemaValidator = createSharedSchemaValidator();
/** How often a task's state is re-read (client polls, tasks/result waits, cancel watch). */
const TASK_POLL_MS = 1_000;

const envelopeSchema = z
  .object({
    ok: z.boolean(),
    result: z.unknown().optional(),
    error: z.object({ kind: z.string(), message: z.string(), stack: z.string().optional() }).optional(),
    logs: z.array(z.object({ level: z.string(), text: z.string() })),
    calls: z.array(z.object({ capability: z.string(), category: z.string(), decision: z.string() }).loose()),
    images: z.array(
      z.object({ asset_id: z.string(), mime: z.string(), width: z.number(), height: z.number() }),
    ),
    durationMs: z.number(),
  })
  .loose();

/** Built once: a server is built per HTTP request, and zod schemas are costly to construct. */
const executeInputSchema = z.object({
  code: z.string().min(1, "code is empty: send one ES module with a default export").max(200_000),
  title: z.string().max(200).optional(),
});
const viewImageInputSchema = z.object({ asset_id: z.string().min(1).max(100) });
/**
 * The tool's schemas as the SDK builds them from shapes (its objectFromShape: a zod/v4-mini
 * object), but once: given shapes, it builds them again for every server, one per request, and a
 * parked request holds its server.
 */
const executeInputObject = zMini.object(executeInputSchema.shape);
const executeOutputObject = zMini.object(envelopeSchema.shape);

/** Which elicitation modes a client declared; `elicitation: {}` is form mode (protocol 2025-11-25). */
function elicitationModes(declared: unknown): { form: boolean; url: boolean } {
  if (!declared || typeof declared !== "object") return { form: false, url: false };
  const caps = declared as { form?: unknown; url?: unknown };
  const empty = Object.keys(caps).length === 0;
  return { form: empty || caps.form !== undefined, url: caps.url !== undefined };
}

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

  const executeConfig = {
    title: "Execute an action",
    description: toolDescription,
    inputSchema: executeInputObject,
    outputSchema: executeOutputObject,
  };
  type ExecuteArgs = { code: string; title?: string | undefined };
  type ExecuteExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

  /** Today's path: the request stays open for the whole run (progress, elicitation, cancel on disconnect). */
  const executeDirect = async ({ code, title }: ExecuteArgs, extra: ExecuteExtra) => {
    const progressToken = extra._meta?.progressToken;
    const timers = new Map<string, NodeJS.Timeout>();
    const elicitations = new Map<string, AbortController>();
    const urlElicitations = new Set<string>();
    let progress = 0;
    let runId: string | undefined;

    const announce = (info: PendingApprovalInfo) => {
      if (progressToken === undefined) return;
      progress += 1;
      const left = Math.max(0, Math.round((info.expiresAt - Date.now()) / 1000));
      void extra
        .sendNotification({
          method: "notifications/progress",
          params: {
            progressToken,
            progress,
            message: `Waiting for approval of ${info.capability} (${info.category}); answer it at ${backend.approvalUrl(info.id)} — expires in ${left}s`,
          },
        })
        .catch(() => {});
    };

    const envelope: ObservationEnvelope = await backend
      .execute({
        identity,
        sessionId,
        code,
        title,
        requestId: String(extra.requestId),
        signal: extra.signal,
        onRunStarted(id) {
          runId = id;
          if (progressToken === undefined) return;
          progress += 1;
          void extra
            .sendNotification({
              method: "notifications/progress",
              params: {
                progressToken,
                progress,
                message: `Run ${id} started; its state: ${RUN_RESOURCE_PREFIX}${id}`,
              },
            })
            .catch(() => {});
        },
        onApprovalPending(info) {
          announce(info);
          timers.set(
            info.id,
            setInterval(() => announce(info), PROGRESS_EVERY_MS),
          );
          const modes = elicitationModes(server.server.getClientCapabilities()?.elicitation);
          if (modes.url) {
            // URL mode: the client offers to open the approval page itself. Its answer only says
            // whether the person went there; the decision is taken in the console.
            void extra
              .sendRequest(
                {
                  method: "elicitation/create",
                  params: {
                    mode: "url",
                    message: `${info.capability} (${info.category}) waits for approval. Open the ToolStore console to allow or deny it.`,
                    url: backend.approvalUrl(info.id),
                    elicitationId: info.id,
                    _meta: { [ELICIT_META_KEY]: info.id },
                  },
                },
                elicitResultSchema,
                { signal: extra.signal, timeout: Math.max(1_000, info.expiresAt - Date.now()) },
              )
              .catch(() => {});
            urlElicitations.add(info.id);
          }
          if (modes.form) {
            const controller = new AbortController();
            elicitations.set(info.id, controller);
            // Over stdio the answer comes back here. Over HTTP it may reach another instance, so
            // the HTTP layer routes it by the approval id (rewriteElicitationIds) and this
            // promise is aborted when the approval settles.
            void extra
              .sendRequest(
                {
                  method: "elicitation/create",
                  params: {
                    message: `${info.capability} (${info.category}) wants to run with ${info.argsPreview}. Approve it in the ToolStore console: ${backend.approvalUrl(info.id)} — or deny it here.`,
                    requestedSchema: {
                      type: "object",
                      properties: {
                        decision: {
                          type: "string",
                          title: "Decision",
                          enum: ["deny", "wait"],
                          enumNames: ["Deny", "Keep waiting for the console"],
                        },
                      },
                      required: ["decision"],
                    },
                    _meta: { [ELICIT_META_KEY]: info.id },
                  },
                },
                elicitResultSchema,
                { signal: controller.signal, timeout: Math.max(1_000, info.expiresAt - Date.now()) },
              )
              .then((result) => {
                const answer =
                  result.action === "accept" ? ELICIT_ANSWERS[result.content?.decision ?? ""] : undefined;
                if (answer) return backend.answerFromClient(identity, info.id, answer);
              })
              .catch(() => {});
          }
        },
        onApprovalSettled(id) {
          clearInterval(timers.get(id));
          timers.delete(id);
          elicitations.get(id)?.abort();
          elicitations.delete(id);
          if (urlElicitations.delete(id)) {
            void extra
              .sendNotification({
                method: "notifications/elicitation/complete",
                params: { elicitationId: id },
              })
              .catch(() => {});
          }
        },
      })
      .finally(() => {
        for (const t of timers.values()) clearInterval(t);
        for (const c of elicitations.values()) c.abort();
      });
    return envelopeResult(envelope, runId);
  };

  if (!tasks) {
    server.registerTool("execute_code", executeConfig, executeDirect);
  } else {
    // A client that supports tasks may run execute_code as one: the action goes on after the
    // request returns, its state (input_required while a human decides) and result are in the
    // database, and the client polls or fetches it later from any instance, in any session.
    server.experimental.tasks.registerToolTask(
      "execute_code",
      { ...executeConfig, execution: { taskSupport: "optional" as const } },
      {
        // The task API types its arguments `unknown` for a schema object; the SDK parsed them with it.
        createTask: async (args: unknown, extra: CreateTaskRequestHandlerExtra) => {
          const { code, title } = args as ExecuteArgs;
          const task = await extra.taskStore.createTask({
            ttl: extra.taskRequestedTtl ?? null,
            pollInterval: TASK_POLL_MS,
          });
          void runAsTask(task.taskId, { code, title });
          return { task };
        },
        getTask: (_args: unknown, extra: TaskRequestHandlerExtra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: (_args: unknown, extra: TaskRequestHandlerExtra) =>
          extra.taskStore.getTaskResult(extra.taskId) as Promise<CallToolResult>,
      },
    );
    // A call without task augmentation keeps today's path instead of the SDK's polled task.
    (server as unknown as { handleAutomaticTaskPolling: unknown }).handleAutomaticTaskPolling = async (
      _tool: unknown,
      request: { params: { arguments?: Record<string, unknown> } },
      extra: ExecuteExtra,
    ) => {
      const parsed = executeInputSchema.safeParse(request.params.arguments ?? {});
      if (!parsed.success) {
        return {
          content: [{ type: "text" as const, text: `Input validation error: ${parsed.error.message}` }],
          isError: true,
        };
      }
      return executeDirect(parsed.data, extra);
    };
  }

  /** The task's run: not tied to any request; its status and result go to the task store. */
  async function runAsTask(taskId: string, { code, title }: ExecuteArgs): Promise<void> {
    const store = tasks as TaskStore;
    const controller = new AbortController();
    const waiting = new Map<string, PendingApprovalInfo>();
    const cancelWatch = setInterval(() => {
      void store.getTask(taskId).then(
        (t) => {
          if (t?.status === "cancelled") controller.abort("the client cancelled the task");
        },
        () => undefined,
      );
    }, TASK_POLL_MS);
    const waitingMessage = () =>
      [...waiting.values()]
        .map((i) => `Waiting for approval of ${i.capability} (${i.category}) at ${backend.approvalUrl(i.id)}`)
        .join("; ");
    let runId: string | undefined;
    try {
      const envelope = await backend.execute({
        identity,
        sessionId,
        code,
        title,
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
      });
      await store.storeTaskResult(taskId, "completed", envelopeResult(envelope, runId));
    } catch (error) {
      await store
        .storeTaskResult(taskId, "failed", {
          content: [{ type: "text" as const, text: `execute_code failed: ${(error as Error).message}` }],
          isError: true,
        })
        .catch(() => undefined);
    } finally {
      clearInterval(cancelWatch);
    }
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
