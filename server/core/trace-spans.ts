/**
 * The engine's spans, each started by one hook line in the data path: the run, each capability
 * call (capability, category, decision, reason; never argument values), the approval wait, the
 * sandbox run and a toolset's egress requests. Attribute names follow OpenTelemetry's semantic
 * conventions where they exist (GenAI `execute_tool`, HTTP client), `toolstore.*` elsewhere.
 */
import type { Category, Session } from "./capabilities/types";
import { isAppError } from "./errors";
import { type TraceContext, telemetry } from "./telemetry";

export interface TracedRun {
  /** The run span's context: the parent of its calls, carried across the sandbox boundary. */
  readonly context: TraceContext;
  finish(outcome: { ok: boolean; errorKind?: string | null; calls: number }): void;
}

/** The run's span, a child of the active one (the MCP request, a console request). */
export function traceRun(runId: string, session: Session): TracedRun {
  const t = telemetry();
  const span = t.startSpan("toolstore.run", {
    attributes: {
      "toolstore.run.id": runId,
      "toolstore.surface": session.surface,
      "toolstore.mode": session.mode,
      "toolstore.api_key.id": session.apiKeyId,
      "enduser.id": session.userId || undefined,
    },
  });
  const context = t.contextWith(span);
  return {
    context,
    finish(outcome) {
      span.setAttributes({
        "toolstore.run.ok": outcome.ok,
        "toolstore.run.calls": outcome.calls,
        "toolstore.run.error_kind": outcome.errorKind ?? undefined,
      });
      if (!outcome.ok) span.fail(outcome.errorKind ?? "error", `the action ended with ${outcome.errorKind}`);
      span.end();
    },
  };
}

export interface TracedCall {
  category(category: Category): void;
  decided(outcome: { decision: string; reason: string; via?: string; approvalId?: string | null }): void;
}

/**
 * One capability call as a child span of `parent` (the run's; default the active one), with the
 * call's own work (gate, approval wait, impl and what the impl sends upstream) under it.
 */
export function traceCall<T>(
  parent: TraceContext | undefined,
  capability: string,
  body: (call: TracedCall) => Promise<T>,
): Promise<T> {
  const t = telemetry();
  if (!t.tracing) return body(UNTRACED_CALL);
  const span = t.startSpan(`execute_tool ${capability}`, {
    ...(parent ? { parent } : {}),
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": capability,
      "gen_ai.tool.type": "function",
      "toolstore.capability": capability,
    },
  });
  const call: TracedCall = {
    category: (category) => span.setAttributes({ "toolstore.category": category }),
    decided: (outcome) =>
      span.setAttributes({
        "toolstore.decision": outcome.decision,
        "toolstore.decision.reason": outcome.reason,
        "toolstore.decision.via": outcome.via,
        "toolstore.approval.id": outcome.approvalId ?? undefined,
      }),
  };
  return t
    .run(t.contextWith(span, parent), () => body(call))
    .then(
      (value) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        span.fail(
          isAppError(error) ? error.code : "capability_failed",
          isAppError(error) ? error.code : undefined,
        );
        span.end();
        throw error;
      },
    );
}

const UNTRACED_CALL: TracedCall = { category() {}, decided() {} };

/** The wait for a human's answer: its own span, and the approval wait histogram. */
export function traceApprovalWait(
  approvalId: string,
  capability: { name: string; category: Category },
  now: () => number,
): { end(status: string): void } {
  const t = telemetry();
  const started = now();
  const span = t.startSpan("toolstore.approval.wait", {
    attributes: {
      "toolstore.approval.id": approvalId,
      "toolstore.capability": capability.name,
      "toolstore.category": capability.category,
    },
  });
  return {
    end(status) {
      span.setAttributes({ "toolstore.approval.status": status });
      span.end();
      t.observe("approval_wait", (now() - started) / 1000, {
        category: capability.category,
        outcome: status,
      });
    },
  };
}

/** The action's time in the sandbox pool, with its wait for a worker as an event and a measure. */
export function traceSandbox(now: () => number): {
  queued(queued: boolean): void;
  end(outcome: { ok: boolean; errorKind?: string | undefined; logs: number }): void;
} {
  const t = telemetry();
  const span = t.startSpan("toolstore.sandbox.run", {
    attributes: { "toolstore.sandbox.runtime": "quickjs" },
  });
  let queuedAt: number | undefined;
  let waited = 0;
  return {
    queued(queued) {
      if (queued) {
        queuedAt = now();
        span.addEvent("queued");
        return;
      }
      if (queuedAt === undefined) return;
      waited += now() - queuedAt;
      queuedAt = undefined;
      span.addEvent("dequeued");
    },
    end(outcome) {
      span.setAttributes({
        "toolstore.sandbox.queue_ms": waited,
        "toolstore.sandbox.logs": outcome.logs,
        "toolstore.sandbox.error_kind": outcome.errorKind,
      });
      if (!outcome.ok && outcome.errorKind) span.fail(outcome.errorKind);
      span.end();
      t.observe("sandbox_queue_wait", waited / 1000);
    },
  };
}

/**
 * One egress request of a toolset binding, under the call that runs the binding (`parent`, captured
 * when the binding started: the request itself arrives from a worker). Puts `traceparent` on the
 * request. Only the method, host and port are recorded: the path and query may hold argument values.
 */
export function traceEgress(
  parent: TraceContext,
  request: { method: string; url: string; headers: Record<string, string> },
): { end(status: number | null, errorType?: string): void } {
  const t = telemetry();
  if (!t.tracing) return { end() {} };
  let url: URL | undefined;
  try {
    url = new URL(request.url);
  } catch {
    url = undefined;
  }
  const method = request.method.toUpperCase();
  const span = t.startSpan(method, {
    kind: "client",
    parent,
    attributes: {
      "http.request.method": method,
      "server.address": url?.hostname,
      "server.port": url ? Number(url.port || (url.protocol === "https:" ? 443 : 80)) : undefined,
      "url.scheme": url?.protocol.replace(/:$/, ""),
    },
  });
  t.inject(request.headers, t.contextWith(span, parent));
  return {
    end(status, errorType) {
      if (status !== null) span.setAttributes({ "http.response.status_code": status });
      if (errorType) span.fail(errorType);
      else if (status !== null && status >= 400) span.fail(String(status));
      span.end();
    },
  };
}
