/**
 * The MCP SDK's private fields ToolStore uses, in one place. Sessions live in the database, so an
 * instance that first sees a session builds a server and transport for it and must mark them as
 * belonging to a session initialized earlier; the session's requests then share them, so one
 * request's handler is aborted alone when its client goes away, and a cancelled request's stream is
 * ended by hand (the SDK sends it no response and keeps it open). The SDK has no public API for
 * these (1.32.x). A task-capable execute_code also replaces one private method, so a call without
 * task augmentation keeps the direct path (see `runUntaskedCallsDirectly`). `checkSdkCompat` runs
 * when the MCP handler is created and fails the start with a clear message if the installed SDK is
 * not a tested version or the fields are gone, instead of failing on the first request.
 */
import fs from "node:fs";
import path from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolResult,
  type ClientCapabilities,
  ErrorCode,
  type Implementation,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { AppError } from "../core/errors";

/** SDK versions whose private fields were checked (major.minor). */
const TESTED_SDK_VERSIONS = ["1.32"];

/** A transport for a session initialized earlier (maybe on another instance). */
export function resumeTransportSession(
  transport: WebStandardStreamableHTTPServerTransport,
  sessionId: string,
) {
  Object.assign(transport as unknown as Record<string, unknown>, { sessionId, _initialized: true });
}

/** The SDK learns these from initialize, which happened on some earlier request. */
export function restoreClientInfo(
  server: McpServer | Server,
  capabilities: ClientCapabilities,
  clientVersion: Implementation,
) {
  const inner = server instanceof Server ? server : server.server;
  Object.assign(inner as unknown as Record<string, unknown>, {
    _clientCapabilities: capabilities,
    _clientVersion: clientVersion,
  });
}

/**
 * Abort the handler of one request, as the SDK does on notifications/cancelled: a session's
 * requests share a transport, so a client that drops one request must not close it for all.
 */
export function abortRequestHandler(server: McpServer | Server, requestId: string | number, reason: string) {
  const inner = server instanceof Server ? server : server.server;
  const controllers = (
    inner as unknown as { _requestHandlerAbortControllers?: Map<unknown, AbortController> }
  )._requestHandlerAbortControllers;
  controllers?.get(requestId)?.abort(reason);
}

/** The abort signal of a request's handler while it runs (the SDK keeps it private). */
function requestHandlerSignal(
  server: McpServer | Server,
  requestId: string | number,
): AbortSignal | undefined {
  const inner = server instanceof Server ? server : server.server;
  const controllers = (
    inner as unknown as { _requestHandlerAbortControllers?: Map<unknown, AbortController> }
  )._requestHandlerAbortControllers;
  return controllers?.get(requestId)?.signal;
}

/**
 * End the SSE stream of a request that will get no response (its handler was cancelled) and
 * forget the request's correlation: the SDK would keep both for the life of the session's transport.
 */
function endRequestStream(transport: WebStandardStreamableHTTPServerTransport, requestId: string | number) {
  transport.closeSSEStream(requestId);
  (
    transport as unknown as { _requestToStreamMapping?: Map<unknown, unknown> }
  )._requestToStreamMapping?.delete(requestId);
}

/**
 * The SDK sends nothing for a request whose handler was aborted (notifications/cancelled, or the
 * client went away), and its transport then holds that POST's SSE stream open for ever. Once every
 * request of the POST is cancelled the stream ends, with no response as the spec asks; a batch
 * whose other requests still run gets an error for the cancelled one, so it ends after their answers.
 */
export function endStreamWhenCancelled(
  server: McpServer | Server,
  transport: WebStandardStreamableHTTPServerTransport,
  ids: (string | number)[],
) {
  const running = ids.flatMap((id) => {
    const signal = requestHandlerSignal(server, id);
    return signal ? [{ id, signal }] : [];
  });
  for (const { id, signal } of running) {
    const onAbort = () => {
      if (running.every((other) => other.signal.aborted)) {
        for (const other of running) endRequestStream(transport, other.id);
        return;
      }
      const error = { code: ErrorCode.ConnectionClosed, message: "Request was cancelled" };
      void transport.send({ jsonrpc: "2.0", id, error }).catch(() => {});
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  }
}

/**
 * A tools/call without task augmentation, for a tool registered with `taskSupport: "optional"`,
 * goes to `handler` instead of the SDK's automatic polling. The SDK (handleAutomaticTaskPolling,
 * private, no option to turn it off) would create a task and poll the store inside the request,
 * which loses what the request itself carries: progress notifications, elicitation prompts, and
 * the run's cancellation when the client goes away. The handler gets the raw arguments (the SDK
 * has not validated them on this path) and its result is returned as is.
 */
export function runUntaskedCallsDirectly(
  server: McpServer,
  handler: (
    args: Record<string, unknown>,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ) => Promise<CallToolResult>,
): void {
  (server as unknown as { handleAutomaticTaskPolling: unknown }).handleAutomaticTaskPolling = (
    _tool: unknown,
    request: { params: { arguments?: Record<string, unknown> } },
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ) => handler(request.params.arguments ?? {}, extra);
}

/** The installed SDK's version, read from its package.json when it can be found. */
export function installedSdkVersion(root = process.cwd()): string | null {
  try {
    const file = path.join(root, "node_modules", "@modelcontextprotocol", "sdk", "package.json");
    return (JSON.parse(fs.readFileSync(file, "utf8")) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

let checked = false;

export function checkSdkCompat(version: string | null = installedSdkVersion()): void {
  if (checked && version === installedSdkVersion()) return;
  if (version && !TESTED_SDK_VERSIONS.some((v) => version === v || version.startsWith(`${v}.`))) {
    throw new AppError(
      "CONFIG_INVALID",
      `@modelcontextprotocol/sdk ${version} is not a version ToolStore's MCP session handling was tested with (${TESTED_SDK_VERSIONS.join(", ")}.x); install the pinned version with npm ci`,
    );
  }
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => "probe" });
  const fields = transport as unknown as Record<string, unknown>;
  const server = new Server({ name: "probe", version: "0" }, { capabilities: {} });
  restoreClientInfo(server, { elicitation: {} }, { name: "probe-client", version: "1" });
  const ok =
    typeof fields._initialized === "boolean" &&
    fields._requestToStreamMapping instanceof Map &&
    typeof transport.closeSSEStream === "function" &&
    (server as unknown as { _requestHandlerAbortControllers?: unknown })
      ._requestHandlerAbortControllers instanceof Map &&
    server.getClientCapabilities()?.elicitation !== undefined &&
    server.getClientVersion()?.name === "probe-client" &&
    typeof (McpServer.prototype as unknown as { handleAutomaticTaskPolling?: unknown })
      .handleAutomaticTaskPolling === "function";
  if (!ok) {
    throw new AppError(
      "CONFIG_INVALID",
      "the installed @modelcontextprotocol/sdk no longer has the private session fields or methods server/mcp/sdk-compat.ts sets; install the pinned version with npm ci",
    );
  }
  checked = true;
}
