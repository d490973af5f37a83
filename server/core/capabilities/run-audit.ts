/**
 * What one engine run tells the audit and the live feed about its calls: gate decisions (audit row
 * and event), calls refused before the gate, and finished calls. Writes nothing waits for are
 * tracked, so `recorded()` can say once they are all stored (or which failed).
 */
import { isAppError } from "../errors";
import type { DecisionSink, EngineEvent, EventPublisher, GateVerdict, JournalFields } from "../gate/ports";
import type { ResolvedCapability } from "./registry";
import type { ArgsSnapshot } from "./snapshot";
import type { Category, Session } from "./types";

/** Arguments over this many characters are recorded by hash only. */
const MAX_RECORDED_ARGS = 64 * 1024;

export interface RunAuditDeps {
  decisions: DecisionSink;
  events: EventPublisher;
  clock: { now(): number };
}

export interface RunAuditInit {
  /** Null for a direct call (its decisions are not tied to a persisted run). */
  runId: string | null;
  session: Session;
  sandboxed: boolean;
  /** The surface's own listener; a throwing one must not break the run. */
  emit?: (event: EngineEvent) => void;
  persisted?: () => Promise<void>;
}

export interface GateDecision {
  decision: GateVerdict;
  reason: string;
  ruleId: string | null;
  approvalId: string | null;
}

export interface RunAudit {
  /** Tells the surface's listener, never throwing. */
  emit(event: EngineEvent): void;
  /**
   * Records a decision (audit row and live event). Only a call let through to an impl that may
   * change the world waits for it to be durable (and for the run's row); any other decision is
   * written with the run's next commit.
   */
  decision(
    cap: ResolvedCapability,
    snapshot: ArgsSnapshot | null,
    decision: GateDecision,
    ms: number,
    journal?: JournalFields,
  ): Promise<void>;
  /**
   * A durable run's call that now waits for a human: its journal row (decision `ask`, the
   * approval's id) is written before the wait, so a replay finds the request.
   */
  waiting(
    cap: ResolvedCapability,
    snapshot: ArgsSnapshot,
    approvalId: string,
    journal: JournalFields | undefined,
  ): Promise<void>;
  /** A write nothing waits for (a journal row's outcome): `recorded()` waits for it too. */
  track(written: Promise<void>): void;
  /** A call refused before the gate is live information too: the timeline shows it with its reason. */
  refused(capability: string, category: Category | null, error: unknown): void;
  /** Live information only (the decision row is the audit): the caller does not wait for it. */
  finished(capability: string, ok: boolean, ms: number): void;
  /** Resolves once every decision is recorded; rejects with the first that could not be. */
  recorded(): Promise<void>;
}

/** The argument fields an AppError names as wrong, for the timeline. */
function refusedFields(error: unknown): { field: string; reason: string }[] {
  const details = isAppError(error) ? (error.details as { fields?: unknown } | undefined) : undefined;
  return Array.isArray(details?.fields) ? (details.fields as { field: string; reason: string }[]) : [];
}

export function createRunAudit(deps: RunAuditDeps, init: RunAuditInit): RunAudit {
  /** Writes of decisions the call did not wait for, until written; `recorded()` waits for them. */
  const unawaited = new Set<Promise<void>>();
  /** The first of those writes that failed. */
  let unrecorded: { error: unknown } | undefined;

  function emit(event: EngineEvent): void {
    try {
      init.emit?.(event);
    } catch {
      // A surface's listener must not break the run.
    }
  }

  function publishLive(event: EngineEvent): void {
    emit(event);
    void deps.events.publish(event, { lazy: true }).catch(() => undefined);
  }

  function track(written: Promise<void>): void {
    unawaited.add(written);
    written.then(
      () => unawaited.delete(written),
      (error) => {
        unawaited.delete(written);
        unrecorded ??= { error };
      },
    );
  }

  async function decision(
    cap: ResolvedCapability,
    snapshot: ArgsSnapshot | null,
    outcome: GateDecision,
    ms: number,
    journal?: JournalFields,
  ): Promise<void> {
    const entry = {
      runId: init.runId,
      sessionId: init.session.id,
      capability: cap.name,
      category: cap.spec.category,
      decision: outcome.decision,
      reason: outcome.reason,
      ruleId: outcome.ruleId,
      approvalId: outcome.approvalId,
      argsHash: snapshot?.hash ?? "",
      args: snapshot && snapshot.json.length <= MAX_RECORDED_ARGS ? snapshot.json : null,
      ms,
      at: deps.clock.now(),
    };
    // The live feed gets no argument values: only the audit row keeps them (what-if reads them).
    const { args: _args, ...live } = entry;
    const event: EngineEvent = { type: "gate.decision", ...live };
    const row = journal ? { ...entry, journal } : entry;
    emit(event);
    // A direct call (console, CLI) returns only once its decision is stored.
    const durable = !init.sandboxed || (outcome.decision === "allow" && cap.spec.category !== "read");
    const written = Promise.all([
      deps.decisions.record(row, { durable }),
      deps.events.publish(event, { lazy: true }),
    ]).then(() => undefined);
    if (durable) {
      await Promise.all([written, init.persisted?.()]);
      return;
    }
    track(written);
  }

  return {
    emit,
    decision,
    track,
    async waiting(cap, snapshot, approvalId, journal) {
      if (!journal || init.runId === null) return;
      await deps.decisions.record(
        {
          runId: init.runId,
          sessionId: init.session.id,
          capability: cap.name,
          category: cap.spec.category,
          decision: "deny",
          decisionOverride: "ask",
          reason: "waiting for a human",
          ruleId: null,
          approvalId,
          argsHash: snapshot.hash,
          ms: 0,
          at: deps.clock.now(),
          journal,
        },
        { durable: true },
      );
    },
    refused(capability, category, error) {
      publishLive({
        type: "call.refused",
        runId: init.runId,
        sessionId: init.session.id,
        capability,
        category,
        reason: error instanceof Error ? error.message : String(error),
        fields: refusedFields(error),
        at: deps.clock.now(),
      });
    },
    finished(capability, ok, ms) {
      publishLive({
        type: "call.finished",
        runId: init.runId,
        sessionId: init.session.id,
        capability,
        ok,
        ms,
        at: deps.clock.now(),
      });
    },
    async recorded() {
      while (unawaited.size > 0) await Promise.allSettled([...unawaited]);
      if (unrecorded) throw unrecorded.error;
    },
  };
}
