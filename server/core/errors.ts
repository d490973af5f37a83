/**
 * The one error type of the core. Each code says when it is thrown; adapters (tRPC, MCP, CLI)
 * map codes once and the UI branches on codes, never on message text.
 * Guest failures are values in the envelope, not exceptions.
 */
export const ERROR_CODES = {
  /** Input from a user or agent failed validation (schema, shape, size). */
  BAD_INPUT: "BAD_INPUT",
  /** A capability, module, toolset, rule, key or row does not exist. */
  NOT_FOUND: "NOT_FOUND",
  /** The caller is not signed in or the credential is invalid/revoked. */
  UNAUTHENTICATED: "UNAUTHENTICATED",
  /** The caller is signed in but its role does not allow the action. */
  FORBIDDEN: "FORBIDDEN",
  /** A state transition lost a compare-and-set (already decided, expired, revoked). */
  CONFLICT: "CONFLICT",
  /** The gate denied a capability call (deny rule, human denial, expiry). */
  GATE_DENIED: "GATE_DENIED",
  /** The gate blocked a non-read capability because the session is in plan mode. */
  GATE_BLOCKED_PLAN: "GATE_BLOCKED_PLAN",
  /** A capability name is not registered or not mounted for the session. */
  CAPABILITY_UNKNOWN: "CAPABILITY_UNKNOWN",
  /** A capability was registered without a valid category. */
  CATEGORY_REQUIRED: "CATEGORY_REQUIRED",
  /** A toolset folder failed validation (see details for file:line messages). */
  TOOLSET_INVALID: "TOOLSET_INVALID",
  /** A skill folder or upload failed validation (see details.errors for file:line messages). */
  SKILL_INVALID: "SKILL_INVALID",
  /** A per-run or per-key limit was exceeded (call budget, rate limit, size). */
  LIMIT_EXCEEDED: "LIMIT_EXCEEDED",
  /** A `toolstore/ui` call has no connected client, or none that renders that call (a headless run). */
  CLIENT_REQUIRED: "CLIENT_REQUIRED",
  /** Nobody answered a `toolstore/ui` question before its timeout. */
  CLIENT_TIMEOUT: "CLIENT_TIMEOUT",
  /** The person at the client declined to answer a `toolstore/ui` question. */
  CLIENT_DECLINED: "CLIENT_DECLINED",
  /** Configuration is unusable (bad DATABASE_URL, port in use, missing binary). */
  CONFIG_INVALID: "CONFIG_INVALID",
  /** A bug or an unexpected failure of a dependency. */
  INTERNAL: "INTERNAL",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;

  constructor(code: ErrorCode, message: string, options?: { details?: unknown; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.details = options?.details;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
