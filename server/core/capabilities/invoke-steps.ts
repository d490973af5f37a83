import type { GateOutcome } from "../gate/gate";
import type { JournalFields, JournalSettle } from "../gate/ports";
import {
  type CallContext,
  type CallRecord,
  type EngineRun,
  type EngineRunInit,
  gateError,
  type InvokeDeps,
  toGuestError,
} from "./invoke";
import {
  divergedMessage,
  encodeJournalError,
  encodeJournalResult,
  JOURNAL_ARGS_MAX,
  type RunJournal,
} from "./journal";
import { PLANNED_REASON, type Planner } from "./plan-calls";
import type { RunAudit } from "./run-audit";
import type { Category, ImageRef, JsonObject } from "./types";

/** What a run's calls share. */
export interface SharedRunState {
  calls: CallRecord[];
  images: ImageRef[];
  inFlight: Set<Promise<unknown>>;
  journal: RunJournal | undefined;
  audit: RunAudit;
  persistedRunId: string | null;
  /** Plan mode: the calls planned instead of run (plan-calls.ts). */
  planner: Planner | null;
}

export function createCallSteps(
  deps: InvokeDeps,
  init: EngineRunInit,
  shared: SharedRunState,
  runOf: () => EngineRun,
) {
  const { calls, images, inFlight, journal, audit, persistedRunId } = shared;

  /** Notes a call refused before the gate (unknown name, bad arguments) and hands back its error. */
  function invalid(
    seq: number,
    name: string,
    category: Category | null,
    error: unknown,
    ms: number,
  ): unknown {
    const prior = journal?.entry(seq);
    if (prior && journal) {
      const message = error instanceof Error ? error.message : String(error);
      return journal.halt({
        kind: "diverged",
        message: divergedMessage(seq, prior, { capability: name, invalid: message }),
      });
    }
    calls.push({ capability: name, category, decision: "invalid", reason: (error as Error).message, ms });
    audit.refused(name, category, error);
    return error;
  }

  function fields(call: CallContext, state: JournalFields["state"]): JournalFields | undefined {
    if (!journal) return undefined;
    return {
      seq: call.seq,
      state,
      args: call.snapshot.json.length <= JOURNAL_ARGS_MAX ? call.snapshot.json : null,
      clock: call.clock?.length ? JSON.stringify(call.clock) : null,
    };
  }

  /** After the gate: record the decision (and the journal row), then run the impl if allowed. */
  async function decided(call: CallContext, outcome: GateOutcome, replayed = false): Promise<unknown> {
    const { cap, name } = call;
    const decidedMs = deps.clock.now() - call.started;
    call.traced?.decided(outcome);
    const allowed = outcome.decision === "allow";
    const planned = shared.planner !== null && outcome.decision === "blocked";
    if (planned) outcome.reason = PLANNED_REASON;
    await audit.decision(cap, call.snapshot, outcome, decidedMs, fields(call, allowed ? "started" : null));
    const line: CallRecord = {
      capability: name,
      category: cap.spec.category,
      decision: outcome.decision,
      reason: outcome.reason,
      ms: decidedMs,
      ...(replayed ? { replayed: true } : {}),
    };
    calls.push(line);
    if (planned && shared.planner) return shared.planner.add(name, cap.spec.category, call.snapshot);
    if (!allowed) throw gateError(name, outcome);
    return runImpl(call, line);
  }

  /** The impl itself, with its journal row settled after it (a stalled owner stops before it). */
  async function runImpl(call: CallContext, line: CallRecord): Promise<unknown> {
    const { cap, name, seq } = call;
    const changes = cap.spec.category !== "read" && cap.spec.journal !== "nested";
    if (journal && changes && !(await journal.holds())) {
      throw journal.halt({
        kind: "lease_lost",
        message: "another instance took this run over; this one stopped before the call",
      });
    }
    let ok = false;
    const firstImage = images.length;
    const running = cap.impl(runOf(), call.snapshot.value as JsonObject, call.site);
    inFlight.add(running);
    try {
      const result = await running;
      ok = true;
      const text = persistedRunId ? encodeJournalResult(result, images.slice(firstImage)) : null;
      // Too large to keep: the row stays `started` (a replay runs a read again, asks about a write).
      if (journal && persistedRunId && text !== null) {
        settle(seq, { state: "ok", result: text }, changes);
      }
      return result;
    } catch (error) {
      // A call cut short because the run ended (parked, cancelled) has no outcome to replay.
      if (journal && persistedRunId && !init.signal.aborted) {
        settle(seq, { state: "error", result: encodeJournalError(toGuestError(name, error)) }, changes);
      }
      throw error;
    } finally {
      inFlight.delete(running);
      line.ms = deps.clock.now() - call.started;
      audit.finished(name, ok, line.ms);
    }
  }

  function settle(seq: number, change: JournalSettle, durable: boolean): void {
    if (!persistedRunId) return;
    audit.track(deps.decisions.settle(persistedRunId, seq, change, { durable }));
  }

  /**
   * The oldest open request (pending, or allowed and unused) for this call that the journal does
   * not know: its attempt died between asking and journaling. Taking it asks the human once.
   */
  async function adoptApproval(capability: string, argsHash: string) {
    const open = await deps.gate.approvals.openForRun(persistedRunId as string);
    const mine = open
      .filter((r) => r.capability === capability && r.argsHash === argsHash && !journal?.refers(r.id))
      .sort((a, b) => a.createdAt - b.createdAt);
    return mine[0] ?? null;
  }

  return { invalid, fields, decided, runImpl, adoptApproval };
}
