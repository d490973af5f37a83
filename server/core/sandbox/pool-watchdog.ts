/**
 * The pool's wall-clock watchdog. A worker publishes the deadline of the synchronous pump it is in
 * through a shared buffer; a pump that runs past it by more than the grace (a long built-in call
 * that QuickJS's interrupt handler never sees) gets its worker terminated, and the pool replaces
 * it. The same sweep retires extra workers that have been idle a while. `exitFailure` words what
 * the runs of a worker that went away are told.
 */

import { failure } from "./pool-jobs";
import { WATCHDOG_ACTION_SLOT, type WorkerOutcome } from "./protocol";

/** What the watchdog reads of a worker. */
export interface WatchedSlot {
  /** [0]: absolute deadline (Date.now() ms) of the pump in progress, 0 when idle. */
  watchdogDeadline: Float64Array;
  /** [WATCHDOG_ACTION_SLOT]: the id of the job whose pump it is. */
  watchdogIds: Int32Array;
  jobs: { readonly size: number };
  isReady: boolean;
  idleSince: number;
}

export interface WatchdogOptions<S extends WatchedSlot> {
  /** How far past its deadline a pump may run. */
  graceMs: number;
  /** Extra workers (beyond `keepWorkers`) idle this long go. */
  idleRetireMs: number;
  keepWorkers: number;
  slots: readonly S[];
  /** The pump of `jobId` overran: terminate the worker. */
  overran(slot: S, jobId: number): void;
  /** An extra worker idle past `idleRetireMs`: let it go. */
  idle(slot: S): void;
  now?: () => number;
}

export interface Watchdog {
  /** One look at every worker (run on an interval; exposed for tests). */
  sweep(): void;
  stop(): void;
}

export function createWatchdog<S extends WatchedSlot>(options: WatchdogOptions<S>): Watchdog {
  const now = options.now ?? Date.now;
  function sweep(): void {
    const at = now();
    for (const slot of [...options.slots]) {
      const deadline = slot.watchdogDeadline[0] ?? 0;
      if (deadline > 0 && at > deadline + options.graceMs) {
        options.overran(slot, slot.watchdogIds[WATCHDOG_ACTION_SLOT] ?? -1);
      } else if (
        options.slots.length > options.keepWorkers &&
        slot.jobs.size === 0 &&
        slot.isReady &&
        at - slot.idleSince > options.idleRetireMs
      ) {
        options.idle(slot);
      }
    }
  }
  const timer = setInterval(sweep, Math.max(20, Math.min(100, options.graceMs / 2)));
  timer.unref();
  return { sweep, stop: () => clearInterval(timer) };
}

/** What a run is told when its worker went away: overran by it, replaced for another run, or crashed. */
export function exitFailure(
  slot: { overrunJobId?: number; lastError?: string },
  job: { id: number; deadlineMs: number },
  code: number,
): WorkerOutcome {
  if (job.id === slot.overrunJobId) {
    return failure(
      "timeout",
      `the run overran its deadline of ${job.deadlineMs} ms inside a long built-in call; its sandbox was terminated`,
    );
  }
  if (slot.overrunJobId !== undefined) {
    return failure(
      "internal",
      "the sandbox worker was replaced because another run in it (of the same key, or a toolset binding one of them called) overran its deadline",
    );
  }
  return failure(
    "internal",
    `the sandbox worker exited unexpectedly (code ${code}${slot.lastError ? `: ${slot.lastError}` : ""})`,
  );
}
