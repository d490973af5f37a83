/**
 * The MCP server of one request: exactly two tools (execute_code, view_image) and one resource
 * (toolstore://capabilities), for one API key and one MCP session. It adds no behaviour of its
 * own: actions, approvals and images all come from the backend.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { ObservationEnvelope } from "../core/actions/envelope";
import type { ApiKeyIdentity } from "../services/api-keys";
import type { ApprovalAnswer, McpBackend, PendingApprovalInfo } from "./backend";
import { RUN_META_KEY, RUN_RESOURCE_PREFIX, registerRunResource } from "./run-resource";

export const SERVER_INFO = { name: "toolstore", version: "0.1.0" };
export const ELICIT_META_KEY = "toolstore/approvalId";
/** Answers a client's prompt can give. Approving is the console's: a key never approves its own request. */
export const ELICIT_ANSWERS: Record<string, ApprovalAnswer> = { deny: "deny" };
const elicitResultSchema = z.object({
  action: z.string(),
  content: z.object({ decision: z.string().optional() }).loose().optional(),
});
const PROGRESS_EVERY_MS = 5_000;

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

export async function createMcpServer(options: {
  identity: ApiKeyIdentity;
  sessionId: string;
  backend: McpBackend;
}): Promise<McpServer> {
  const { identity, sessionId, backend } = options;
  const { toolDescription, capabilities } = await backend.describe(identity);
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {}, resources: {} },
    instructions:
      "ToolStore runs JavaScript actions that import capability modules. Call execute_code with one ES module; read toolstore://capabilities for the mounted modules.",
  });

  server.registerTool(
    "execute_code",
    {
      title: "Execute an action",
      description: toolDescription,
      inputSchema: {
        code: z.string().min(1, "code is empty: send one ES module with a default export").max(200_000),
        title: z.string().max(200).optional(),
      },
      outputSchema: envelopeSchema.shape,
    },
    async ({ code, title }, extra) => {
      const progressToken = extra._meta?.progressToken;
      const timers = new Map<string, NodeJS.Timeout>();
      const elicitations = new Map<string, AbortController>();
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
            if (server.server.getClientCapabilities()?.elicitation) {
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
          },
        })
        .finally(() => {
          for (const t of timers.values()) clearInterval(t);
          for (const c of elicitations.values()) c.abort();
        });
      return {
        content: [{ type: "text", text: JSON.stringify(envelope, null, 2) }],
        structuredContent: envelope as unknown as Record<string, unknown>,
        isError: !envelope.ok,
        ...(runId ? { _meta: { [RUN_META_KEY]: runId } } : {}),
      };
    },
  );

  server.registerTool(
    "view_image",
    {
      title: "View an image",
      description:
        "Returns an image an action saved (its asset_id comes from the envelope's images or from toolstore/assets). Only images of this key's user are served.",
      inputSchema: { asset_id: z.string().min(1).max(100) },
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

  registerRunResource(server, identity, backend);
  return server;
}
