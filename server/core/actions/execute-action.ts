/**
 * One action's trip through the sandbox: the static import check against the session's mounted
 * modules (refused: nothing runs), the pool run with every host call through run.invoke, and the
 * observation envelope of what came back.
 */
import { type EngineRun, toGuestError } from "../capabilities/invoke";
import type { CapabilityRegistry } from "../capabilities/registry";
import type { JsonValue, Session } from "../capabilities/types";
import type { Clock } from "../gate/ports";
import type { LibraryTable } from "../libraries/library-table";
import { splitImports, withLibraries } from "../libraries/mount";
import type { SandboxLimits } from "../sandbox/limits";
import type { HostCallControl, SandboxPool, SandboxRunResult } from "../sandbox/pool";
import type { GuestNondet } from "../sandbox/protocol";
import { type TraceContext, telemetry } from "../telemetry";
import { traceSandbox } from "../trace-spans";
import { buildEnvelope, type EnvelopeError, type ObservationEnvelope } from "./envelope";
import type { RunStore } from "./ports";
import { checkActionSource } from "./static-check";

export interface ExecuteActionDeps {
  registry: Pick<CapabilityRegistry, "mountedModules">;
  pool: SandboxPool;
  runs: Pick<RunStore, "setQueued">;
  clock: Clock;
  maxCodeChars: number;
  /** Library modules (`toolstore/lib/<name>`): checked like modules, run in the guest, never invoked. */
  libraries?: LibraryTable;
}

export interface ExecuteActionInput {
  runId: string;
  code: string;
  session: Session;
  input: JsonValue | undefined;
  limits: SandboxLimits;
  engineRun: EngineRun;
  /** The host calls in flight; the run pauses the deadline of one while it waits for an approval. */
  controls: Set<HostCallControl>;
  signal: AbortSignal;
  startedAt: number;
  /** The guest's random seed and the clock readings to replay (a durable run). */
  nondet?: GuestNondet;
  /** The run's trace context: the sandbox span is its child. */
  trace?: TraceContext;
}

/** Fair share is per API key, else per user (console, CLI), else per session. */
export function fairnessKey(session: Session): string {
  if (session.apiKeyId) return `key:${session.apiKeyId}`;
  if (session.userId) return `user:${session.userId}`;
  return `session:${session.id}`;
}

/** The action's result as JSON, or the internal error of a result that is not JSON. */
function readResult(outcome: SandboxRunResult): {
  result?: JsonValue | undefined;
  error?: EnvelopeError | undefined;
} {
  if (!outcome.ok || outcome.resultJson === null) return { error: outcome.error };
  try {
    return { result: JSON.parse(outcome.resultJson) as JsonValue, error: outcome.error };
  } catch {
    return { error: { kind: "internal", message: "the sandbox returned a result that is not JSON" } };
  }
}

export async function executeAction(
  deps: ExecuteActionDeps,
  run: ExecuteActionInput,
): Promise<ObservationEnvelope> {
  const { engineRun, controls } = run;
  const mounted: Record<string, string[]> = {};
  for (const m of await deps.registry.mountedModules(run.session))
    mounted[m.name] = m.exports.map((e) => e.exportName);
  const check = checkActionSource(run.code, withLibraries(mounted, deps.libraries), deps.maxCodeChars);
  if (!check.ok) {
    return buildEnvelope({
      error: { kind: "refused", message: check.message },
      logs: [],
      calls: [],
      images: [],
      durationMs: deps.clock.now() - run.startedAt,
    });
  }
  const { modules, libraries } = splitImports(check.imports, mounted, deps.libraries);

  const sandbox = run.trace
    ? telemetry().run(run.trace, () => traceSandbox(() => deps.clock.now()))
    : traceSandbox(() => deps.clock.now());
  const outcome = await deps.pool.runAction({
    code: run.code,
    input: run.input ?? null,
    modules,
    ...(libraries ? { libraries } : {}),
    limits: run.limits,
    signal: run.signal,
    fairnessKey: fairnessKey(run.session),
    ...(run.nondet ? { nondet: run.nondet } : {}),
    onQueued: (queued) => {
      sandbox.queued(queued);
      // Shown as `queued` while the run waits for a sandbox; a failed write only loses the label.
      deps.runs.setQueued(run.runId, queued).catch(() => {});
    },
    onCall: async (name, argsJson, control) => {
      controls.add(control);
      try {
        const site = control.call === undefined ? undefined : { sandboxCall: control.call };
        return { ok: true, value: await engineRun.invokeJson(name, argsJson, site, control.clock) };
      } catch (error) {
        return { ok: false, error: toGuestError(name, error) };
      } finally {
        controls.delete(control);
      }
    },
  });
  sandbox.end({ ok: outcome.ok, errorKind: outcome.error?.kind, logs: outcome.logs.length });

  return buildEnvelope({
    ...readResult(outcome),
    logs: outcome.logs,
    logsDropped: outcome.logsDropped,
    calls: engineRun.calls,
    images: engineRun.images,
    durationMs: deps.clock.now() - run.startedAt,
    ...(run.session.mode === "plan" ? { plan: { id: run.runId, calls: engineRun.plan } } : {}),
  });
}
