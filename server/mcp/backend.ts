/**
 * What the MCP surface needs from the engine. The MCP code only adapts the protocol; the
 * implementation over the engine and the database lives in server/services/mcp-backend.ts.
 */
import type { ObservationEnvelope } from "../core/actions/envelope";
import type { ApiKeyIdentity } from "../services/api-keys";

export interface PendingApprovalInfo {
  id: string;
  capability: string;
  category: string;
  /** The argument snapshot the approver will see, as JSON text. */
  argsPreview: string;
  expiresAt: number;
}

export type ApprovalAnswer = "once" | "session" | "deny";

export interface McpBackend {
  /** The action contract, the mounted modules' signatures, and the capabilities resource. */
  describe(identity: ApiKeyIdentity): Promise<{ toolDescription: string; capabilities: unknown }>;
  execute(input: {
    identity: ApiKeyIdentity;
    /** The MCP session: "allow for session" grants are scoped to it. */
    sessionId: string;
    code: string;
    title?: string;
    /** JSON-RPC id of the tools/call, so a notifications/cancelled reaching any instance finds the run. */
    requestId?: string;
    signal: AbortSignal;
    onApprovalPending(info: PendingApprovalInfo): void;
    /** The run has its id (and a row): toolstore://runs/<id> answers from now on. */
    onRunStarted?(runId: string): void;
    onApprovalSettled(id: string): void;
  }): Promise<ObservationEnvelope>;
  /** An image the key's user may see, or null (unknown or not theirs: the same answer). */
  image(identity: ApiKeyIdentity, assetId: string): Promise<{ mime: string; base64: string } | null>;
  /** An answer a human gave in the MCP client's elicitation prompt. */
  answerFromClient(identity: ApiKeyIdentity, approvalId: string, answer: ApprovalAnswer): Promise<void>;
  approvalUrl(approvalId: string): string;
  /**
   * notifications/cancelled for a request of this key's MCP session: cancels the run it started,
   * on whichever instance runs it. False when no such run is running.
   */
  cancelRequest(identity: ApiKeyIdentity, mcpSessionId: string, requestId: string): Promise<boolean>;
  /** A run's state for toolstore://runs/<id>: the key's own runs only (null otherwise). */
  runState(identity: ApiKeyIdentity, runId: string): Promise<RunState | null>;
  /** The key's latest runs, newest first (the resource template's list). */
  recentRuns(
    identity: ApiKeyIdentity,
    limit: number,
  ): Promise<{ id: string; title: string; status: string }[]>;
}

export interface RunState {
  id: string;
  /** running | ok | error | interrupted */
  status: string;
  title: string;
  startedAt: string;
  finishedAt: string | null;
  /** The observation envelope once finished (an interrupted run's lists the calls the audit saw). */
  envelope: ObservationEnvelope | null;
}
