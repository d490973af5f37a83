/**
 * One server span per MCP request on the Streamable HTTP mount (MCP semantic conventions:
 * `{mcp.method.name} {target}`, e.g. `tools/call execute_code`). A W3C `traceparent` in the
 * request's `params._meta` (SEP-414) or, failing that, in the HTTP headers continues the client's
 * trace. The span is active while the SDK handles the request (so the run is its child) and ends
 * when the transport sends the response with the request's id. Off, it costs one check.
 */
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { type TraceContext, type TraceSpan, telemetry } from "../core/telemetry";

type Transport = WebStandardStreamableHTTPServerTransport;

/** Spans waiting for their response, per transport (a session's POSTs share one). */
const pendingByTransport = new WeakMap<Transport, Map<string, TraceSpan>>();

function watch(transport: Transport): Map<string, TraceSpan> {
  let pending = pendingByTransport.get(transport);
  if (pending) return pending;
  const spans = new Map<string, TraceSpan>();
  pending = spans;
  pendingByTransport.set(transport, spans);
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage, options) => {
    const id = "id" in message && !("method" in message) ? String(message.id) : undefined;
    const span = id === undefined ? undefined : spans.get(id);
    if (span && id !== undefined) {
      spans.delete(id);
      if ("error" in message && message.error) {
        span.setAttributes({ "rpc.response.status_code": String(message.error.code) });
        span.fail(String(message.error.code), message.error.message.slice(0, 200));
      } else if ("result" in message && (message.result as { isError?: unknown }).isError === true) {
        span.fail("tool_error");
      }
      span.end();
    }
    return send(message, options);
  };
  return spans;
}

function targetOf(method: string, params: Record<string, unknown> | undefined): string | undefined {
  if (method === "tools/call" || method === "prompts/get") {
    return typeof params?.name === "string" ? params.name : undefined;
  }
  if (method === "resources/read") return typeof params?.uri === "string" ? params.uri : undefined;
  return undefined;
}

export interface McpRequestTrace {
  /** Runs the transport's handling with the (first) request's span active. */
  handle<T>(transport: Transport, fn: () => Promise<T>): Promise<T>;
}

const UNTRACED: McpRequestTrace = { handle: (_transport, fn) => fn() };

export function traceMcpRequests(req: Request, body: unknown, sessionId: string | null): McpRequestTrace {
  const t = telemetry();
  if (!t.tracing || body === undefined) return UNTRACED;
  const messages = (Array.isArray(body) ? body : [body]).filter(isJSONRPCRequest);
  if (messages.length === 0) return UNTRACED;
  const header = req.headers.get("traceparent");
  const fromHeaders = header
    ? t.extract({ traceparent: header, tracestate: req.headers.get("tracestate") ?? undefined })
    : undefined;
  const protocol = req.headers.get("mcp-protocol-version");
  const started: { id: string; span: TraceSpan; context: TraceContext }[] = [];
  for (const message of messages) {
    const params = message.params as Record<string, unknown> | undefined;
    const meta = params?._meta as Record<string, unknown> | undefined;
    const parent = (meta ? t.extract(meta) : undefined) ?? fromHeaders;
    const target = targetOf(message.method, params);
    const span = t.startSpan(target ? `${message.method} ${target}` : message.method, {
      kind: "server",
      ...(parent ? { parent } : {}),
      attributes: {
        "mcp.method.name": message.method,
        "jsonrpc.request.id": String(message.id),
        "jsonrpc.protocol.version": "2.0",
        "mcp.session.id": sessionId ?? undefined,
        "mcp.protocol.version": protocol ?? undefined,
        "network.transport": "tcp",
        "network.protocol.name": "http",
        ...(message.method === "tools/call"
          ? { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": target }
          : {}),
        ...(message.method === "resources/read" ? { "mcp.resource.uri": target } : {}),
      },
    });
    started.push({ id: String(message.id), span, context: t.contextWith(span, parent) });
  }
  return {
    async handle(transport, fn) {
      const pending = watch(transport);
      for (const { id, span } of started) pending.set(id, span);
      // A client that goes away gets no response: its spans end with the request.
      const abandon = () => {
        for (const { id, span } of started) {
          if (pending.get(id) !== span) continue;
          pending.delete(id);
          span.fail("cancelled", "the client disconnected");
          span.end();
        }
      };
      req.signal.addEventListener("abort", abandon, { once: true });
      const first = started[0];
      try {
        return await (first ? t.run(first.context, fn) : fn());
      } catch (error) {
        abandon();
        throw error;
      }
    },
  };
}
