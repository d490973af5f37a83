/**
 * run.invoke — THE one call path to a capability, for sandboxed actions and direct calls alike:
 *   resolve (mounted?) -> budget -> snapshot once (canonical JSON + sha256) -> validate (ajv)
 *   -> gate (rules, mode x category, grants, approval) -> record (audit + event) -> impl(run, snapshot)
 * The impl receives the frozen snapshot, the same bytes that were hashed, shown and approved.
 */
import { AppError, isAppError } from "../errors";
import type { Gate } from "../gate/gate";
import type { Clock, DecisionSink, EngineEvent, EventPublisher, GateVerdict } from "../gate/ports";
import type { TraceContext } from "../telemetry";
import { type TracedCall, traceCall } from "../trace-spans";
import type { CapabilityRegistry, ResolvedCapability } from "./registry";
import { createRunAudit } from "./run-audit";
import { type ArgsSnapshot, snapshotArgs, snapshotFromJson } from "./snapshot";
import type { CallSite, CapabilityRun, Category, ImageRef, JsonObject, Session } from "./types";
import { validateArgs } from "./validate";

/** One line of the envelope's `calls`. "invalid": refused before the gate (unknown name, bad arguments). */
export interface CallRecord {
  capability: string;
  category: Category | null;
  decision: GateVerdict | "invalid";
  reason?: string;
  ms: number;
  /**
   * Only in the envelope of an interrupted run, read back from the audit: whether the impl
   * finished (`completed`/`failed`), was let through but never reported back (`unknown`: its side
   * effect may or may not have happened), or never ran (`not_run`: the gate said no).
   */
  outcome?: "completed" | "failed" | "unknown" | "not_run";
}

export interface InvokeDeps {
  registry: CapabilityRegistry;
  gate: Gate;
  decisions: DecisionSink;
  events: EventPublisher;
  clock: Clock;
}

export interface EngineRunInit {
  runId: string;
  session: Session;
  signal: AbortSignal;
  /** An action in the sandbox (its run id is persisted with decisions and approvals) or a direct call. */
  sandboxed: boolean;
  /** The run's trace context: each call's span is its child (the sandbox's messages carry no context). */
  trace?: TraceContext;
  /** Capability calls allowed in this run (nested calls count). Default unlimited. */
  maxCalls?: number;
  /** Characters of JSON arguments per call. */
  argsBytes?: number;
  /** Stop the sandbox deadline while a human decides; returns the resume function. */
  pauseDeadline?: () => () => void;
  /** Live events of this run for the surface that started it. */
  emit?: (event: EngineEvent) => void;
  /**
   * Resolves once the run's own row is written. A call whose impl may change the world (and an
   * approval) waits for it; read calls do not.
   */
  persisted?: () => Promise<void>;
}

export interface EngineRun extends CapabilityRun {
  readonly calls: CallRecord[];
  readonly images: ImageRef[];
  /** invoke with arguments given as JSON text (the sandbox's one snapshot), parsed exactly once. */
  invokeJson(name: string, argsJson: string, site?: CallSite): Promise<unknown>;
  /**
   * Resolves once every decision of this run is recorded; rejects with the first that could not
   * be. Decisions nothing waits on (read calls, refusals) are written late, in a group commit.
   */
  recorded(): Promise<void>;
}

/** The guest-visible shape of a refusal (the action contract). */
function gateError(capability: string, decision: "deny" | "blocked", reason: string): AppError {
  if (decision === "blocked") {
    return new AppError("GATE_BLOCKED_PLAN", `blocked_in_plan_mode: ${capability}`, {
      details: { error: "blocked_in_plan_mode", capability },
    });
  }
  return new AppError("GATE_DENIED", `permission_denied: ${capability}: ${reason}`, {
    details: { error: "permission_denied", capability, reason },
  });
}

/** The snapshot is taken synchronously, at the call: later mutation of the caller's object changes nothing. */
function takeNow(make: () => ArgsSnapshot): () => ArgsSnapshot {
  try {
    const snapshot = make();
    return () => snapshot;
  } catch (error) {
    return () => {
      throw error;
    };
  }
}

export function createEngineRun(deps: InvokeDeps, init: EngineRunInit): EngineRun {
  const calls: CallRecord[] = [];
  const images: ImageRef[] = [];
  let attempted = 0;
  const persistedRunId = init.sandboxed ? init.runId : null;
  const audit = createRunAudit(deps, {
    runId: persistedRunId,
    session: init.session,
    sandboxed: init.sandboxed,
    ...(init.emit ? { emit: init.emit } : {}),
    ...(init.persisted ? { persisted: init.persisted } : {}),
  });
  const argsLimit = init.argsBytes ?? Number.POSITIVE_INFINITY;

  /** Notes a call refused before the gate (unknown name, bad arguments) and hands back its error. */
  function invalid(name: string, category: Category | null, error: unknown, ms: number): unknown {
    calls.push({ capability: name, category, decision: "invalid", reason: (error as Error).message, ms });
    audit.refused(name, category, error);
    return error;
  }

  async function invokeWith(
    name: string,
    takeSnapshot: () => ArgsSnapshot,
    site?: CallSite,
    traced?: TracedCall,
  ): Promise<unknown> {
    const started = deps.clock.now();
    const elapsed = () => deps.clock.now() - started;
    if (init.signal.aborted) throw new AppError("CONFLICT", "the run has ended");
    let cap: ResolvedCapability;
    let snapshot: ArgsSnapshot;
    try {
      cap = await deps.registry.resolveMounted(init.session, name);
    } catch (error) {
      throw invalid(name, null, error, elapsed());
    }
    const category = cap.spec.category;
    traced?.category(category);
    attempted += 1;
    if (init.maxCalls !== undefined && attempted > init.maxCalls) {
      const reason = `call budget of ${init.maxCalls} capability calls per run exceeded`;
      calls.push({ capability: name, category, decision: "deny", reason, ms: elapsed() });
      await audit.decision(
        cap,
        null,
        { decision: "deny", reason, ruleId: null, approvalId: null },
        elapsed(),
      );
      throw new AppError("LIMIT_EXCEEDED", reason, {
        details: { error: "limit_exceeded", capability: name, reason },
      });
    }
    try {
      snapshot = takeSnapshot();
      validateArgs(cap.spec, snapshot.value);
    } catch (error) {
      throw invalid(name, category, error, elapsed());
    }

    const outcome = await deps.gate.check(
      {
        runId: persistedRunId,
        session: init.session,
        signal: init.signal,
        ...(init.pauseDeadline ? { pauseDeadline: init.pauseDeadline } : {}),
        ...(init.persisted ? { persisted: init.persisted } : {}),
        emit: audit.emit,
      },
      {
        name: cap.name,
        category,
        versionHash: cap.versionHash,
        ...(cap.spec.userMessage ? { userMessage: cap.spec.userMessage } : {}),
      },
      snapshot,
    );
    const decidedMs = elapsed();
    traced?.decided(outcome);
    await audit.decision(cap, snapshot, outcome, decidedMs);
    const line: CallRecord = {
      capability: name,
      category,
      decision: outcome.decision,
      reason: outcome.reason,
      ms: decidedMs,
    };
    calls.push(line);
    if (outcome.decision !== "allow") throw gateError(name, outcome.decision, outcome.reason);

    let ok = false;
    try {
      const result = await cap.impl(run, snapshot.value as JsonObject, site);
      ok = true;
      return result;
    } finally {
      line.ms = elapsed();
      audit.finished(name, ok, line.ms);
    }
  }

  const run: EngineRun = {
    runId: init.runId,
    session: init.session,
    signal: init.signal,
    sandboxed: init.sandboxed,
    calls,
    images,
    invoke: (name, args) => {
      const take = takeNow(() => snapshotArgs(args, argsLimit));
      // From an impl (a nested call) or a surface: under the active span.
      return traceCall(undefined, name, (traced) => invokeWith(name, take, undefined, traced));
    },
    invokeJson: (name, argsJson, site) => {
      const take = takeNow(() => snapshotFromJson(argsJson, argsLimit));
      return traceCall(init.trace, name, (traced) => invokeWith(name, take, site, traced));
    },
    reportImage(image) {
      images.push({ asset_id: image.asset_id, mime: image.mime, width: image.width, height: image.height });
    },
    ...(init.pauseDeadline ? { pauseDeadline: init.pauseDeadline } : {}),
    recorded: audit.recorded,
  };
  return run;
}

/** The error object a guest sees for a failed call (thrown in the guest as a catchable error). */
export function toGuestError(
  name: string,
  error: unknown,
): { error: string; message: string; capability?: string; reason?: string; fields?: unknown[] } {
  if (isAppError(error)) {
    const details = error.details as { error?: unknown; reason?: unknown; fields?: unknown } | undefined;
    if (details && typeof details.error === "string") {
      const out: { error: string; message: string; capability: string; reason?: string; fields?: unknown[] } =
        {
          error: details.error,
          capability: name,
          message: error.message,
        };
      if (typeof details.reason === "string") out.reason = details.reason;
      if (Array.isArray(details.fields)) out.fields = details.fields;
      return out;
    }
    return { error: error.code.toLowerCase(), capability: name, message: error.message };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    error: "capability_failed",
    capability: name,
    message: `${name} failed: ${message.slice(0, 1000)}`,
  };
}
