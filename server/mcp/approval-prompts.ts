/**
 * The prompts an MCP client may show while a call waits for approval (elicitation, protocol
 * 2025-11-25). URL mode offers to open the approval page; form mode lets the person deny here or
 * keep waiting. Approving is never offered: a key never approves its own request, and a client's
 * answer cannot be told apart from one its agent forged.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { ApprovalAnswer } from "../core/gate/approvals";
import type { ApiKeyIdentity } from "../services/api-keys";
import type { ExecuteExtra } from "./execute-tool";
import type { McpBackend, PendingApprovalInfo } from "./mcp-backend";

export const ELICIT_META_KEY = "toolstore/approvalId";
/** Answers a client's prompt can give. Approving is the console's: a key never approves its own request. */
export const ELICIT_ANSWERS: Record<string, ApprovalAnswer> = { deny: "deny" };
const elicitResultSchema = z.object({
  action: z.string(),
  content: z.object({ decision: z.string().optional() }).loose().optional(),
});

/** Which elicitation modes a client declared; `elicitation: {}` is form mode (protocol 2025-11-25). */
export function elicitationModes(declared: unknown): { form: boolean; url: boolean } {
  if (!declared || typeof declared !== "object") return { form: false, url: false };
  const caps = declared as { form?: unknown; url?: unknown };
  const empty = Object.keys(caps).length === 0;
  return { form: empty || caps.form !== undefined, url: caps.url !== undefined };
}

interface ApprovalPrompts {
  /** Shows a pending approval in the client, in each mode it declared. */
  open(info: PendingApprovalInfo): void;
  /** The approval was decided or expired: its form prompt is withdrawn, its URL prompt completed. */
  settle(approvalId: string): void;
  /** The call ended: every form prompt still open is withdrawn. */
  close(): void;
}

export function createApprovalPrompts(options: {
  server: McpServer;
  extra: ExecuteExtra;
  backend: McpBackend;
  identity: ApiKeyIdentity;
}): ApprovalPrompts {
  const { server, extra, backend, identity } = options;
  const forms = new Map<string, AbortController>();
  const urls = new Set<string>();
  const timeoutOf = (info: PendingApprovalInfo) => Math.max(1_000, info.expiresAt - Date.now());

  function openUrl(info: PendingApprovalInfo): void {
    // The client offers to open the approval page itself. Its answer only says whether the
    // person went there; the decision is taken in the console.
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
        { signal: extra.signal, timeout: timeoutOf(info) },
      )
      .catch(() => {});
    urls.add(info.id);
  }

  function openForm(info: PendingApprovalInfo): void {
    const controller = new AbortController();
    forms.set(info.id, controller);
    // Over stdio the answer comes back here. Over HTTP it may reach another instance, so the
    // HTTP layer routes it by the approval id (rewriteElicitationIds) and this promise is
    // aborted when the approval settles.
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
        { signal: controller.signal, timeout: timeoutOf(info) },
      )
      .then((result) => {
        const answer =
          result.action === "accept" ? ELICIT_ANSWERS[result.content?.decision ?? ""] : undefined;
        if (answer) return backend.answerFromClient(identity, info.id, answer);
      })
      .catch(() => {});
  }

  return {
    open(info) {
      const modes = elicitationModes(server.server.getClientCapabilities()?.elicitation);
      if (modes.url) openUrl(info);
      if (modes.form) openForm(info);
    },
    settle(approvalId) {
      forms.get(approvalId)?.abort();
      forms.delete(approvalId);
      if (urls.delete(approvalId)) {
        void extra
          .sendNotification({
            method: "notifications/elicitation/complete",
            params: { elicitationId: approvalId },
          })
          .catch(() => {});
      }
    },
    close() {
      for (const controller of forms.values()) controller.abort();
    },
  };
}
