/**
 * A run's life in the pool, from submission to its one outcome: queued through the scheduler (or
 * placed straight in its caller's worker, for a binding run in place), started on a worker,
 * released from it, cancelled by its signal or the pool's close, and settled exactly once.
 */
import type { CodeCache } from "./pool-bindings";
import { failure, type GuestCall, type PendingJob, type PoolCounters, type Slot } from "./pool-jobs";
import type { RunScheduler } from "./pool-scheduler";
import type { Job, ToWorker, WorkerOutcome } from "./protocol";

export interface SubmittedRun {
  onCall: PendingJob["onCall"];
  signal?: AbortSignal | undefined;
  onQueued?: ((queued: boolean) => void) | undefined;
  /** A binding's caller, whose worker runs it. */
  here?: GuestCall | undefined;
}

export interface RunTableDeps {
  scheduler: RunScheduler<PendingJob>;
  codes: CodeCache;
  counters: PoolCounters;
  send(slot: Slot, message: ToWorker): void;
  drain(): void;
  isClosed(): boolean;
}

export interface RunTable {
  submit(job: Job, key: string, run: SubmittedRun): Promise<WorkerOutcome & { durationMs: number }>;
  /** Start `job` on `slot` (the scheduler has admitted it). */
  place(job: PendingJob, slot: Slot): void;
  /** The job leaves its worker (done or cancelled): the worker may change hands once empty. */
  release(slot: Slot, job: PendingJob): void;
  cancel(job: PendingJob, reason: string): void;
  settle(job: PendingJob, outcome: WorkerOutcome): void;
}

/** The reason `close()` cancels with: the server's doing, so an `internal` failure, not `cancelled`. */
export const POOL_CLOSED = "sandbox pool closed";
const JOB_ENDED = Object.freeze({ name: "JobEnded", message: "the sandbox job ended" });

export function createRunTable(deps: RunTableDeps): RunTable {
  const { scheduler, counters } = deps;
  let nextJobId = 0;

  function place(job: PendingJob, slot: Slot): void {
    job.slot = slot;
    slot.jobs.set(job.id, job);
    slot.computing.add(job.id);
    slot.worker.ref();
    counters.jobsStarted += 1;
    const queuedMs = Date.now() - job.startedAt;
    const sent = job.job.kind === "binding" ? deps.codes.forWorker(slot.codes, job.job) : job.job;
    const start = queuedMs > 0 ? { ...sent, queuedMs } : sent;
    deps.send(slot, { t: "start", id: job.id, job: start, ...(job.deliver ? { deliver: job.deliver } : {}) });
  }

  function release(slot: Slot, job: PendingJob): void {
    slot.jobs.delete(job.id);
    slot.computing.delete(job.id);
    if (job.suspended === 0) scheduler.admit(job.key, -1);
    if (slot.jobs.size === 0) {
      slot.worker.unref();
      slot.key = undefined;
      slot.idleSince = Date.now();
    }
  }

  function settle(job: PendingJob, outcome: WorkerOutcome): void {
    // A plain reason: abort() without one builds a DOMException with a stack, per job.
    job.done.abort(JOB_ENDED);
    counters.disposeFailures += outcome.disposeFailures;
    job.resolve(outcome);
  }

  function cancel(job: PendingJob, reason: string): void {
    if (job.done.signal.aborted) return;
    scheduler.remove(job);
    const slot = job.slot;
    if (slot?.jobs.get(job.id) === job) {
      release(slot, job);
      deps.send(slot, { t: "cancel", id: job.id, reason });
    }
    // Closing the pool is the server's doing; anything else is the surface stopping its run.
    settle(job, failure(reason === POOL_CLOSED ? "internal" : "cancelled", `cancelled: ${reason}`));
    deps.drain();
  }

  function submit(job: Job, key: string, run: SubmittedRun): Promise<WorkerOutcome & { durationMs: number }> {
    if (deps.isClosed()) return Promise.reject(new Error("sandbox pool is closed"));
    const startedAt = Date.now();
    return new Promise((resolve) => {
      const pending: PendingJob = {
        id: ++nextJobId,
        job,
        key,
        startedAt,
        suspended: 0,
        onCall: run.onCall,
        done: new AbortController(),
        resolve: (outcome) => resolve({ ...outcome, durationMs: Date.now() - startedAt }),
      };
      const { signal, here } = run;
      if (signal) {
        const onAbort = () => cancel(pending, String(signal.reason ?? "aborted"));
        if (signal.aborted) {
          onAbort();
          return;
        }
        signal.addEventListener("abort", onAbort, { once: true });
        pending.done.signal.addEventListener("abort", () => signal.removeEventListener("abort", onAbort));
      }
      if (!here) {
        const queued = run.onQueued ? { onQueued: run.onQueued } : {};
        scheduler.submit(pending, { deadlineMs: job.limits.deadlineMs, ...queued });
        return;
      }
      // Its caller's worker: no queue (the caller holds its place), no other worker to wake.
      here.used = true;
      pending.deliver = { id: here.job.id, callId: here.callId };
      counters.bindingsInPlace += 1;
      scheduler.admit(key, 1);
      place(pending, here.slot);
    });
  }

  return { submit, place, release, cancel, settle };
}
