/**
 * run.invoke — THE one call path to a capability, for sandboxed actions and direct calls alike:
 *   resolve (mounted?) -> budget -> snapshot once (canonical JSON + sha256) -> validate (ajv)
 *   -> gate (rules, mode x category, grants, approval) -> record (audit + event) -> impl(run, snapshot)
 * The impl receives the frozen snapshot, the same bytes that were hashed, shown and approved.
 */
import { AppError, isAppError } from "../errors";
import type { Gate, GateOutcome } from "../gate/gate";
import type { Clock, DecisionSink, EngineEvent, EventPublisher, GateVerdict } from "../gate/ports";
import type { PlanGrant } from "../gate/trials";
import type { TraceContext } from "../telemetry";
import { type TracedCall, traceCall } from "../trace-spans";
import { replayFromJournal } from "./invoke-replay";
import { createCallSteps, type SharedRunState } from "./invoke-steps";
import { divergedMessage, type JournalEntry, JournaledError, type RunJournal } from "./journal";
import { createPlanner, type PlannedCall } from "./plan-calls";
import type { CapabilityRegistry, ResolvedCapability } from "./registry";
import { createRunAudit } from "./run-audit";
import { type ArgsSnapshot, snapshotArgs, snapshotFromJson } from "./snapshot";
import type { CallSite, CapabilityRun, Category, ClientToolRouter, ImageRef, Session } from "./types";
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
  /** Answered from the run's journal on a replay (the impl did not run again). */
  replayed?: boolean;
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
  /** The connected client `toolstore/ui` routes to; absent on headless runs. */
  client?: ClientToolRouter;
  /**
   * Resolves once the run's own row is written. A call whose impl may change the world (and an
   * approval) waits for it; read calls do not.
   */
  persisted?: () => Promise<void>;
  /** A durable run's journal: calls are recorded in it, and a replay is answered from it. */
  journal?: RunJournal;
  /** An approved plan this run may use (plan-calls.ts). */
  plan?: PlanGrant;
}

export interface EngineRun extends CapabilityRun {
  readonly calls: CallRecord[];
  /** Plan mode: the write, execute and external calls that were planned instead of run. */
  readonly plan: PlannedCall[];
  readonly images: ImageRef[];
  /**
   * invoke with arguments given as JSON text (the sandbox's one snapshot), parsed exactly once;
   * `clock`: the guest's clock readings since its previous call (kept in the journal).
   */
  invokeJson(name: string, argsJson: string, site?: CallSite, clock?: number[]): Promise<unknown>;
  /**
   * Resolves once every decision of this run is recorded; rejects with the first that could not
   * be. Decisions nothing waits on (read calls, refusals) are written late, in a group commit.
   */
  recorded(): Promise<void>;
  /** Resolves once no impl of this run is running (a run parks only after its calls in flight). */
  idle(): Promise<void>;
}

/** The guest-visible shape of a refusal (the action contract). */
export function gateError(
  capability: string,
  outcome: Pick<GateOutcome, "decision" | "reason" | "budget">,
): AppError {
  const { decision, reason } = outcome;
  if (outcome.budget) {
    return new AppError("GATE_DENIED", `budget_exceeded: ${capability}: ${reason}`, {
      details: { error: "budget_exceeded", capability, reason, budget: outcome.budget },
    });
  }
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

/** What one call carries through its steps. */
export interface CallContext {
  seq: number;
  name: string;
  cap: ResolvedCapability;
  snapshot: ArgsSnapshot;
  site: CallSite | undefined;
  clock: number[] | undefined;
  started: number;
  traced?: TracedCall | undefined;
}

export function createEngineRun(deps: InvokeDeps, init: EngineRunInit): EngineRun {
  const calls: CallRecord[] = [];
  const images: ImageRef[] = [];
  let attempted = 0;
  let callSeq = 0;
  const inFlight = new Set<Promise<unknown>>();
  const persistedRunId = init.sandboxed ? init.runId : null;
  const journal = persistedRunId ? init.journal : undefined;
  const audit = createRunAudit(deps, {
    runId: persistedRunId,
    session: init.session,
    sandboxed: init.sandboxed,
    ...(init.emit ? { emit: init.emit } : {}),
    ...(init.persisted ? { persisted: init.persisted } : {}),
  });
  const argsLimit = init.argsBytes ?? Number.POSITIVE_INFINITY;
  // Plan mode is a dry run for actions; a direct call in plan mode stays blocked.
  const planner = init.sandboxed && init.session.mode === "plan" ? createPlanner() : null;
  const shared: SharedRunState = { calls, images, inFlight, journal, audit, persistedRunId, planner };
  const { invalid, fields, decided, runImpl, adoptApproval } = createCallSteps(deps, init, shared, () => run);

  const subjectBase = () => ({
    runId: persistedRunId,
    session: init.session,
    signal: init.signal,
    ...(init.pauseDeadline ? { pauseDeadline: init.pauseDeadline } : {}),
    ...(init.persisted ? { persisted: init.persisted } : {}),
    emit: audit.emit,
    ...(journal ? { awaitApproval: journal.awaitApproval } : {}),
    ...(journal?.replaying && persistedRunId ? { adoptApproval } : {}),
    ...(init.plan ? { plan: init.plan } : {}),
  });

  async function invokeWith(
    name: string,
    takeSnapshot: () => ArgsSnapshot,
    site?: CallSite,
    clock?: number[],
    traced?: TracedCall,
  ): Promise<unknown> {
    // The call's place in the run is taken before anything async: it is the guest's call order.
    const seq = ++callSeq;
    const started = deps.clock.now();
    const elapsed = () => deps.clock.now() - started;
    if (init.signal.aborted) throw new AppError("CONFLICT", "the run has ended");
    let cap: ResolvedCapability;
    let snapshot: ArgsSnapshot;
    try {
      cap = await deps.registry.resolveMounted(init.session, name);
    } catch (error) {
      throw invalid(seq, name, null, error, elapsed());
    }
    const category = cap.spec.category;
    traced?.category(category);
    attempted += 1;
    try {
      snapshot = takeSnapshot();
      validateArgs(cap.spec, snapshot.value);
    } catch (error) {
      throw invalid(seq, name, category, error, elapsed());
    }
    const call: CallContext = { seq, name, cap, snapshot, site, clock, started, traced };
    const prior = journal?.entry(seq);
    if (prior && journal) {
      if (prior.capability !== cap.name || prior.argsHash !== snapshot.hash) {
        throw journal.halt({
          kind: "diverged",
          message: divergedMessage(seq, prior, { capability: cap.name, argsHash: snapshot.hash }),
        });
      }
      return replayCall(call, prior);
    }
    if (init.maxCalls !== undefined && attempted > init.maxCalls) {
      const reason = `call budget of ${init.maxCalls} capability calls per run exceeded`;
      calls.push({ capability: name, category, decision: "deny", reason, ms: elapsed() });
      await audit.decision(
        cap,
        snapshot,
        { decision: "deny", reason, ruleId: null, approvalId: null },
        elapsed(),
        fields(call, null),
      );
      throw new AppError("LIMIT_EXCEEDED", reason, {
        details: { error: "limit_exceeded", capability: name, reason },
      });
    }
    const outcome = await deps.gate.check(
      {
        ...subjectBase(),
        ...(journal
          ? {
              onApprovalRequested: (approval) =>
                audit.waiting(cap, snapshot, approval.id, fields(call, "waiting")),
            }
          : {}),
      },
      gateCapability(cap),
      snapshot,
    );
    return decided(call, outcome);
  }

  const replayCall = (call: CallContext, prior: JournalEntry) =>
    replayFromJournal(
      {
        deps,
        journal: journal as RunJournal,
        runId: persistedRunId as string,
        session: init.session,
        signal: init.signal,
        subject: subjectBase,
        audit,
        calls,
        images,
        decided,
        runImpl,
      },
      call,
      prior,
    );

  const run: EngineRun = {
    runId: init.runId,
    session: init.session,
    signal: init.signal,
    sandboxed: init.sandboxed,
    calls,
    plan: planner?.calls ?? [],
    images,
    invoke: (name, args) => {
      const take = takeNow(() => snapshotArgs(args, argsLimit));
      // From an impl (a nested call) or a surface: under the active span.
      return traceCall(undefined, name, (traced) => invokeWith(name, take, undefined, undefined, traced));
    },
    invokeJson: (name, argsJson, site, clock) => {
      const take = takeNow(() => snapshotFromJson(argsJson, argsLimit));
      return traceCall(init.trace, name, (traced) => invokeWith(name, take, site, clock, traced));
    },
    reportImage(image) {
      images.push({ asset_id: image.asset_id, mime: image.mime, width: image.width, height: image.height });
    },
    ...(init.pauseDeadline ? { pauseDeadline: init.pauseDeadline } : {}),
    ...(init.client ? { client: init.client } : {}),
    recorded: audit.recorded,
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
  return run;
}

export function gateCapability(cap: ResolvedCapability) {
  return {
    name: cap.name,
    category: cap.spec.category,
    versionHash: cap.versionHash,
    ...(cap.spec.userMessage ? { userMessage: cap.spec.userMessage } : {}),
  };
}

/** The error object a guest sees for a failed call (thrown in the guest as a catchable error). */
export function toGuestError(
  name: string,
  error: unknown,
): {
  error: string;
  message: string;
  capability?: string;
  reason?: string;
  fields?: unknown[];
  budget?: unknown;
} {
  if (error instanceof JournaledError) return error.guest;
  if (isAppError(error)) {
    const details = error.details as
      | { error?: unknown; reason?: unknown; fields?: unknown; budget?: unknown }
      | undefined;
    if (details && typeof details.error === "string") {
      const out: {
        error: string;
        message: string;
        capability: string;
        reason?: string;
        fields?: unknown[];
        budget?: unknown;
      } = {
        error: details.error,
        capability: name,
        message: error.message,
      };
      if (typeof details.reason === "string") out.reason = details.reason;
      if (Array.isArray(details.fields)) out.fields = details.fields;
      if (details.budget) out.budget = details.budget;
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
