/**
 * What the pool's parts share: a job as the pool holds it, a worker slot, the guest call behind
 * an in-place binding, the pool's counters, and the outcome of a job that failed on the host side.
 */
import type { Worker } from "node:worker_threads";
import type { Job, SandboxError, WorkerOutcome } from "./protocol";

/** What the guest sees when a host call fails: raised in the guest as a catchable error with these fields. */
export interface GuestCallError {
  /** Machine code: `permission_denied`, `blocked_in_plan_mode`, `bad_input`, ... */
  error: string;
  message: string;
  capability?: string;
  reason?: string;
}

export type HostCallReply = { ok: true; value?: unknown } | { ok: false; error: GuestCallError };

export interface HostCallControl {
  /** Stop the job's deadline clock (a human approval is pending). Call the result to restart it. */
  suspendClock(): () => void;
  /** Aborted when the job ends (any way). */
  signal: AbortSignal;
  /**
   * An action's capability call, as an opaque handle: handed back as `RunBindingRequest.caller`, it
   * lets the pool run a TypeScript binding in the action's own worker and settle the guest's
   * promise there, without two more trips through the main thread.
   */
  call?: unknown;
  /** The guest's clock readings since its previous call (Date.now), for the run's journal. */
  clock?: number[];
}

export interface PendingJob {
  id: number;
  job: Job;
  key: string;
  slot?: Slot;
  /** A binding run in its caller's worker: the guest call its result settles there. */
  deliver?: { id: number; callId: number };
  startedAt: number;
  /** Clock suspensions in progress (approval waits): a parked job holds no compute slot. */
  suspended: number;
  onCall: (name: string, json: string, control: HostCallControl) => Promise<HostCallReply>;
  done: AbortController;
  resolve(outcome: WorkerOutcome): void;
}

export interface Slot {
  worker: Worker;
  /** The one key whose jobs this worker holds, while it holds any. */
  key: string | undefined;
  jobs: Map<number, PendingJob>;
  /** Jobs that may be using the worker's thread now (started or replied to, not yet calling). */
  computing: Set<number>;
  idleSince: number;
  watchdogDeadline: Float64Array;
  watchdogIds: Int32Array;
  alive: boolean;
  /** Set when the watchdog terminated the worker for this job id. */
  overrunJobId?: number;
  isReady: boolean;
  lastError?: string;
  ready: Promise<void>;
  markReady(): void;
  /** Ids of the binding code this worker was sent (`BindingJob.codeId`). */
  codes: Set<number>;
}

/** The guest call behind `HostCallControl.call`. It settles once, so it serves one binding. */
export class GuestCall {
  used = false;
  /** The binding ended well and its worker settled the guest's promise with its result. */
  delivered = false;
  constructor(
    readonly slot: Slot,
    readonly job: PendingJob,
    readonly callId: number,
  ) {}
}

/** Counters behind `SandboxPool.stats()`, written by the part that sees each event. */
export interface PoolCounters {
  workersReplaced: number;
  jobsStarted: number;
  bindingsInPlace: number;
  bindingsWarm: number;
  actionsOnSpare: number;
  disposeFailures: number;
  workerPosts: number;
}

export function failure(kind: SandboxError["kind"], message: string): WorkerOutcome {
  return {
    ok: false,
    resultJson: null,
    error: { kind, message },
    logs: [],
    logsDropped: 0,
    countedMs: 0,
    disposeFailures: 0,
  };
}
