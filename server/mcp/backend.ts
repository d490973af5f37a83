/**
 * What the MCP surface needs from the engine. The MCP code only adapts the protocol; the
 * implementation over the engine and the database lives in server/services/mcp-backend.ts.
 */
import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
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
    signal: AbortSignal;
    onApprovalPending(info: PendingApprovalInfo): void;
    onApprovalSettled(id: string): void;
  }): Promise<ObservationEnvelope>;
  /** An image the key's user may see, or null (unknown or not theirs: the same answer). */
  image(identity: ApiKeyIdentity, assetId: string): Promise<{ mime: string; base64: string } | null>;
  /** An answer a human gave in the MCP client's elicitation prompt. */
  answerFromClient(identity: ApiKeyIdentity, approvalId: string, answer: ApprovalAnswer): Promise<void>;
  approvalUrl(approvalId: string): string;
  /**
   * Where execute_code tasks of this key live (MCP tasks, protocol 2025-11-25). Without it the
   * server does not offer tasks and every call runs in its request.
   */
  taskStore?(identity: ApiKeyIdentity): TaskStore;
}
