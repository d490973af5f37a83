/**
 * One binding call (or skill script) in a Python interpreter, end to end: an interpreter for the
 * call's trust domain (the caller's deadline paused while it starts), the call's binding host
 * (binding-host.ts: egress and masking, as for TypeScript toolsets), the request to the worker
 * under the toolset's timeout, and the worker's answer as a BindingResult with every secret form
 * masked. A worker whose interpreter may be broken (out of memory, a JavaScript-level failure)
 * is retired.
 */
import { type BindingHost, createBindingHost } from "../sandbox/binding-host";
import type { BindingResult, RunBindingRequest } from "../sandbox/binding-runtime";
import type { HostFetch } from "../sandbox/host-fetch";
import type { LogEntry, SandboxErrorKind } from "../sandbox/protocol";
import type { CallSender, Sent } from "./call-protocol";
import { type InterpreterPool, PARSE_DOMAIN } from "./interpreter-pool";
import { StartFailure } from "./interpreter-queue";

export interface BindingCallDeps {
  interpreters: InterpreterPool;
  sender: CallSender;
  resultBytes: number;
  logBytes: number;
  maxFetches: number;
  maxBodyBytes: number;
  hostAliases?: Readonly<Record<string, string>>;
  /** The fetch under the call's egress (PythonRuntimeOptions.egress). */
  egress?: (request: RunBindingRequest) => HostFetch;
}

type Fail = (kind: SandboxErrorKind, message: string, logs?: LogEntry[], startup?: boolean) => BindingResult;

export async function runBindingCall(
  deps: BindingCallDeps,
  request: RunBindingRequest,
  script?: { script: string; input: unknown },
): Promise<BindingResult> {
  const started = performance.now();
  const fetch = deps.egress?.(request) ?? request.fetch;
  const host = createBindingHost({
    allowedHosts: request.allowedHosts,
    env: request.env,
    secrets: request.secrets ?? {},
    ...(request.secretPlacements ? { placements: request.secretPlacements } : {}),
    redact: request.redact ?? [],
    timeoutMs: request.timeoutMs,
    maxBodyBytes: deps.maxBodyBytes,
    maxFetches: deps.maxFetches,
    ...(fetch ? { fetch } : {}),
    ...(deps.hostAliases ? { hostAliases: deps.hostAliases } : {}),
  });
  const fail: Fail = (kind, message, logs = [], startup = false) => ({
    ok: false,
    error: { kind, message: host.redact(message), ...(startup ? { startup } : {}) },
    logs: host.redactLogs(logs),
    durationMs: performance.now() - started,
  });
  deps.interpreters.wantSpares();
  const domain = request.trustDomain ?? `anonymous:${request.code.length}:${hashText(request.code)}`;
  if (domain.startsWith(PARSE_DOMAIN)) return fail("refused", "reserved trust domain");
  const limit = Math.min(deps.resultBytes, request.limits?.resultBytes ?? deps.resultBytes);
  let slot: Awaited<ReturnType<InterpreterPool["acquire"]>>;
  try {
    // Waiting for an interpreter is not the caller's time: its deadline pauses (the wait has its
    // own bound), and the toolset's timeout starts in send(), once the code can run.
    slot = await deps.interpreters.acquire(domain, {
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.pauseDeadline ? { onWait: request.pauseDeadline } : {}),
    });
  } catch (error) {
    if (error instanceof StartFailure) {
      return fail(error.timedOut ? "timeout" : "internal", error.message, [], true);
    }
    return fail("internal", (error as Error).message);
  }
  try {
    const kwargs: Record<string, unknown> = { ...(request.kwargs ?? {}) };
    const sent = await deps.sender.send(
      slot,
      {
        t: "call",
        code: request.code,
        request: JSON.stringify(script ?? { function: request.exportName, kwargs, env: host.env }),
        resultBytes: limit,
        logBytes: request.limits?.logBytes ?? deps.logBytes,
      },
      request.timeoutMs,
      host,
      request.signal,
    );
    const result = callResult(sent, { host, fail, limit, timeoutMs: request.timeoutMs, started });
    if (result.retire) deps.interpreters.retire(slot, result.retire);
    return result.result;
  } finally {
    deps.interpreters.release(slot);
  }
}

interface ResultContext {
  host: BindingHost;
  fail: Fail;
  limit: number;
  timeoutMs: number;
  started: number;
}

/** The worker's answer as a BindingResult, and why its worker must go, if it must. */
export function callResult(sent: Sent, context: ResultContext): { result: BindingResult; retire?: string } {
  const { host, fail, limit, timeoutMs } = context;
  const logs = sent.done.logs;
  const overran = `the binding ran longer than ${timeoutMs} ms and was stopped`;
  if (sent.timedOut) return { result: fail("timeout", overran, logs) };
  if (sent.cancelled) return { result: fail("internal", "the call was cancelled", logs) };
  let outcome: { ok: boolean; kind?: string; message?: string; json?: string };
  try {
    outcome = JSON.parse(sent.done.json);
  } catch {
    return { result: fail("internal", "the python worker sent a malformed answer", logs) };
  }
  if (outcome.ok) {
    const { json, value } = host.redactResult(outcome.json ?? "null");
    if (json.length > limit) {
      return { result: fail("threw", `the result is larger than the limit of ${limit} characters`, logs) };
    }
    const durationMs = performance.now() - context.started;
    return { result: { ok: true, value, logs: host.redactLogs(logs), durationMs } };
  }
  if (outcome.kind === "out_of_memory") {
    return {
      result: fail("out_of_memory", outcome.message ?? "out of memory", logs),
      retire: "ran out of memory",
    };
  }
  if (outcome.kind === "interrupted") return { result: fail("timeout", overran, logs) };
  // A JavaScript-level failure may leave the interpreter broken: never reuse that worker.
  if (outcome.kind === "internal") {
    return {
      result: fail("internal", outcome.message ?? "the binding failed", logs),
      retire: "the interpreter failed",
    };
  }
  return { result: fail("threw", outcome.message ?? "the binding failed", logs) };
}

export function hashText(text: string): string {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return (h >>> 0).toString(16);
}
