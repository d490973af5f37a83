/**
 * execute_code in its request: the request stays open for the whole run, so the client hears
 * progress (the run's resource, each approval waited for, again every few seconds), may be
 * prompted about approvals, and its going away cancels the run.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ApiKeyIdentity } from "../services/api-keys";
import { envelopeResult, RUN_RESOURCE_PREFIX } from "../services/mcp-tasks";
import { createApprovalPrompts } from "./approval-prompts";
import type { ExecuteArgs, ExecuteExtra } from "./execute-tool";
import type { McpBackend, PendingApprovalInfo } from "./mcp-backend";
import { YIELD_ADMISSION } from "./node-adapter";
import { createProgressReporter } from "./progress";
import { createMcpUiClient } from "./ui-client";

const PROGRESS_EVERY_MS = 5_000;

export type ExecuteHandler = (args: ExecuteArgs, extra: ExecuteExtra) => Promise<CallToolResult>;

export function createExecuteDirect(options: {
  server: McpServer;
  identity: ApiKeyIdentity;
  sessionId: string;
  backend: McpBackend;
}): ExecuteHandler {
  const { server, identity, sessionId, backend } = options;
  return async (args, extra) => {
    const progress = createProgressReporter(extra);
    const prompts = createApprovalPrompts({ server, extra, backend, identity });
    // Waiting for a person (an approval, an answer to a toolstore/ui prompt), the request no
    // longer needs its admission slot (server/http/admission.ts).
    const yieldSlot = () => {
      const release = extra.authInfo?.extra?.[YIELD_ADMISSION];
      if (typeof release === "function") release();
    };
    const timers = new Map<string, NodeJS.Timeout>();
    let runId: string | undefined;
    const announce = (info: PendingApprovalInfo) => {
      const left = Math.max(0, Math.round((info.expiresAt - Date.now()) / 1000));
      progress.notify(
        `Waiting for approval of ${info.capability} (${info.category}); answer it at ${backend.approvalUrl(info.id)} — expires in ${left}s`,
      );
    };
    try {
      const { envelope } = await backend.execute({
        ...args,
        identity,
        sessionId,
        requestId: String(extra.requestId),
        signal: extra.signal,
        // The request stays open for the run, so its client can answer toolstore/ui calls.
        client: createMcpUiClient({ server, extra, progress, sessionId, onWait: yieldSlot }),
        onRunStarted(id) {
          runId = id;
          progress.notify(`Run ${id} started; its state: ${RUN_RESOURCE_PREFIX}${id}`);
        },
        onApprovalPending(info) {
          yieldSlot();
          announce(info);
          timers.set(
            info.id,
            setInterval(() => announce(info), PROGRESS_EVERY_MS),
          );
          prompts.open(info);
        },
        onApprovalSettled(id) {
          clearInterval(timers.get(id));
          timers.delete(id);
          prompts.settle(id);
        },
      });
      return envelopeResult(envelope, runId);
    } finally {
      for (const t of timers.values()) clearInterval(t);
      prompts.close();
    }
  };
}
