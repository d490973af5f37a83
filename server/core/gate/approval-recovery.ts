/**
 * Closing approvals nobody will use any more (after a restart, and periodically): pending ones
 * whose run is gone expire, allowed ones whose run died before the call ran become `abandoned`.
 * Rows a run on this instance still waits for are never touched.
 */

import { abandonedEvent, expiredEvent } from "./approval-events";
import { RUN_GONE_REASON } from "./approval-waiters";
import type { ApprovalRecord, ApprovalStore, Clock, EventPublisher } from "./ports";

export const ABANDONED_REASON =
  "the server process running the action stopped before the approved call ran; nothing was executed";

/** A direct call's waiter consumes within moments; only a row older than this is surely dead. */
const DIRECT_CALL_STALE_MS = 60_000;

export interface ApprovalRecoveryDeps {
  store: ApprovalStore;
  events: EventPublisher;
  clock: Clock;
  /** Whether a run on this instance waits for the approval. */
  isWaited(id: string): boolean;
}

export interface RecoveryOptions {
  /** Also close direct calls (no run): at startup, their waiter died with the old process. */
  includeDirectCalls?: boolean;
}

/**
 * Which of these runs still run on a live instance or are parked (any instance resumes those):
 * asked once per pass for every run in question, so a sweep over thousands of parked runs is a
 * few queries, not one per row.
 */
export type RunLiveness = (runIds: string[]) => Promise<ReadonlySet<string>>;
/** One pass of recovery; returns how many rows it closed. */
type RecoveryStep = (
  deps: ApprovalRecoveryDeps,
  liveRuns: RunLiveness,
  options: RecoveryOptions,
) => Promise<number>;

const runIdsOf = (records: ApprovalRecord[]): string[] => [
  ...new Set(records.flatMap((r) => (r.runId === null ? [] : [r.runId]))),
];

const expireOrphanedPending: RecoveryStep = async (deps, liveRuns, options) => {
  const now = deps.clock.now();
  // A parked run's requests are alive wherever it is resumed: not read at all.
  const candidates = (await deps.store.listPending({ exceptParkedAt: now })).filter(
    (record) =>
      !deps.isWaited(record.id) &&
      (record.runId !== null || options.includeDirectCalls === true || record.expiresAt <= now),
  );
  const alive = await liveRuns(runIdsOf(candidates.filter((record) => record.expiresAt > now)));
  let count = 0;
  for (const record of candidates) {
    const timedOut = record.expiresAt <= now;
    if (record.runId !== null && !timedOut && alive.has(record.runId)) continue;
    const reason = timedOut ? undefined : RUN_GONE_REASON;
    if (await deps.store.expire(record.id, reason)) {
      count += 1;
      await deps.events.publish(expiredEvent(record, deps.clock.now(), reason));
    }
  }
  return count;
};

/** Allowed but never used: the waiter died between the decision and the consume. */
const abandonUnusedAllowed: RecoveryStep = async (deps, liveRuns, options) => {
  const candidates = (await deps.store.listAllowedUnconsumed()).filter((record) => !deps.isWaited(record.id));
  const alive = await liveRuns(runIdsOf(candidates));
  let count = 0;
  for (const record of candidates) {
    if (record.runId === null) {
      const stale = (record.decidedAt ?? 0) < deps.clock.now() - DIRECT_CALL_STALE_MS;
      if (!options.includeDirectCalls || !stale) continue;
    } else if (alive.has(record.runId)) {
      continue;
    }
    if (await deps.store.abandon(record.id, ABANDONED_REASON)) {
      count += 1;
      await deps.events.publish(abandonedEvent(record, ABANDONED_REASON, deps.clock.now()));
    }
  }
  return count;
};

/** Returns how many rows it closed. */
export async function recoverApprovals(
  deps: ApprovalRecoveryDeps,
  liveRuns: RunLiveness,
  options: RecoveryOptions = {},
): Promise<number> {
  const expired = await expireOrphanedPending(deps, liveRuns, options);
  return expired + (await abandonUnusedAllowed(deps, liveRuns, options));
}
