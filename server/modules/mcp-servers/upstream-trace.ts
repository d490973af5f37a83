/**
 * One tools/call to an upstream MCP server as a client span (MCP semantic conventions), under the
 * capability call that makes it, with the W3C trace context for the request's `_meta` (SEP-414)
 * so the upstream's own spans join the trace, and its latency for /metrics. The span names the
 * capability, its category and the gate's decision; it never holds argument values.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Category } from "../../core/capabilities/types";
import { isAppError } from "../../core/errors";
import { telemetry } from "../../core/telemetry";
import type { ConnectionConfig } from "./connections";

export interface UpstreamCallTrace {
  /** `_meta` for the request: `traceparent` (and `tracestate`); undefined when traces are off. */
  readonly meta: Record<string, string> | undefined;
  end(result: CallToolResult | undefined, error?: unknown): void;
}

export function traceUpstreamCall(
  config: Pick<ConnectionConfig, "name" | "transport" | "url">,
  tool: string,
  capability: { name: string; category: Category },
): UpstreamCallTrace {
  const t = telemetry();
  const started = performance.now();
  let meta: Record<string, string> | undefined;
  let span: ReturnType<typeof t.startSpan> | undefined;
  if (t.tracing) {
    let server: URL | undefined;
    try {
      server = config.transport === "http" && config.url ? new URL(config.url) : undefined;
    } catch {
      server = undefined;
    }
    span = t.startSpan(`tools/call ${tool}`, {
      kind: "client",
      attributes: {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "network.transport": config.transport === "http" ? "tcp" : "pipe",
        "network.protocol.name": config.transport === "http" ? "http" : undefined,
        "server.address": server?.hostname,
        "server.port": server ? Number(server.port || (server.protocol === "https:" ? 443 : 80)) : undefined,
        "toolstore.mcp.server": config.name,
        "toolstore.capability": capability.name,
        "toolstore.category": capability.category,
        // The impl runs only after the gate let the call through.
        "toolstore.decision": "allow",
      },
    });
    meta = {};
    t.inject(meta, t.contextWith(span));
  }
  return {
    meta,
    end(result, error) {
      const outcome = error ? "error" : result?.isError ? "tool_error" : "ok";
      t.observe("upstream_call", (performance.now() - started) / 1000, { server: config.name, outcome });
      if (!span) return;
      if (error) span.fail(isAppError(error) ? error.code : error instanceof Error ? error.name : "error");
      else if (result?.isError) span.fail("tool_error");
      span.end();
    },
  };
}
