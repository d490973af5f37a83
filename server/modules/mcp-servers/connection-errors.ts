/**
 * What an upstream MCP server's failures become: a status for the server's page that names the
 * fix (connect failures, a revoked credential), and the error a calling action sees, with a
 * machine code in `details.error` it can branch on (timeout, upstream_crashed, tool_changed, ...).
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { AppError, isAppError } from "../../core/errors";
import type { ConnectionConfig, ConnectionStatus } from "./connections";

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The HTTP status the SDK's HTTP transport put on its error, if any. */
export function httpStatusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" && code >= 100 && code < 600 ? code : undefined;
}

/** The fix for a connection failure, named in the server's status. */
export function explainConnectError(config: ConnectionConfig, error: unknown): ConnectionStatus {
  const message = describeError(error);
  if (isAppError(error) && error.code === "UNAUTHENTICATED")
    return { status: "unauthorized", lastError: error.message };
  if (config.transport === "http") {
    const status = httpStatusOf(error);
    if (status === 401 || /\b401\b/.test(message)) {
      return {
        status: "unauthorized",
        lastError: config.oauth
          ? `${config.url} refused ToolStore's OAuth token (401): press Authorize on the server's page to sign in again`
          : `${config.url} answered 401 Unauthorized: set the Authorization header (for example "Bearer {{secret:TOKEN}}") and its secret on the server's page, or press Authorize there if the server uses OAuth`,
      };
    }
    if (status === 403) {
      return {
        status: "unauthorized",
        lastError: `${config.url} answered 403 Forbidden: the credential lacks access`,
      };
    }
    if (/ECONNREFUSED|fetch failed|ENOTFOUND/.test(message)) {
      return {
        status: "error",
        lastError: `cannot reach ${config.url} (${message}): is the server running, and is the URL right?`,
      };
    }
    return { status: "error", lastError: `connecting to ${config.url} failed: ${message}` };
  }
  if (/ENOENT/.test(message)) {
    return {
      status: "error",
      lastError: `command "${config.command}" was not found on PATH (${message}): install it or give its absolute path`,
    };
  }
  return { status: "error", lastError: `starting "${config.command}" failed: ${message}` };
}

/** The server cannot be used as configured (the status says why, the same words as on its page). */
export function unavailableError(config: ConnectionConfig, status: ConnectionStatus): AppError {
  return new AppError("CONFIG_INVALID", `MCP server "${config.name}": ${status.lastError}`, {
    details: { error: "upstream_unavailable", reason: status.lastError },
  });
}

/**
 * The tool as the server lists it now is not the one an admin accepted (its pin hash differs, or
 * it is gone). The gate allowed the accepted tool, so this is no gate denial: the call is not
 * sent, the new version waits for review (the listing that found it put it back to pending), and
 * the action is told which.
 */
export function toolChangedError(
  config: ConnectionConfig,
  tool: string,
  listedHash: string | undefined,
): AppError {
  return new AppError(
    "CONFLICT",
    listedHash
      ? `${config.name}.${tool} changed upstream since it was accepted; it was not called, and its new version waits for an admin's review`
      : `${config.name} no longer lists the tool ${tool}; it was not called`,
    {
      details: {
        error: "tool_changed",
        reason: listedHash
          ? "the tool changed upstream since it was accepted and waits for review"
          : "the server no longer lists the tool",
      },
    },
  );
}

/** A failed tools/call as the action sees it; `stderr` is the process's kept tail. */
export function upstreamCallError(
  config: ConnectionConfig,
  tool: string,
  error: unknown,
  stderr: string,
): Error {
  if (error instanceof AppError) return error;
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return new AppError(
      "LIMIT_EXCEEDED",
      `${config.name}.${tool} timed out after ${config.callTimeoutMs} ms`,
      {
        details: {
          error: "timeout",
          reason: `the call was cancelled upstream after ${config.callTimeoutMs} ms`,
        },
      },
    );
  }
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
    const tail = stderr.trim().split("\n").slice(-3).join(" | ");
    return new AppError(
      "INTERNAL",
      `MCP server "${config.name}" ${config.transport === "stdio" ? "process exited" : "connection closed"} during the call to ${tool}; it restarts on the next call${tail ? ` (stderr: ${tail.slice(0, 500)})` : ""}`,
      { details: { error: "upstream_crashed", reason: "the upstream process exited during the call" } },
    );
  }
  if (error instanceof McpError) {
    return new Error(`${config.name} rejected the call to ${tool}: ${error.message}`);
  }
  return new Error(`${config.name}: ${describeError(error)}`);
}
