/**
 * The sandbox pool: a warm set of worker threads (worker-main.ts) that run actions and toolset
 * bindings in QuickJS. It owns the wall-clock watchdog (a worker whose synchronous pump overruns
 * its deadline is terminated and replaced) and turns host calls from the guest into calls of the
 * callbacks given per job. It knows nothing of capabilities or the gate.
 *
 * ## API for toolset bindings (used by toolset modules)
 *
 * ```ts
 * const r = await pool.runBinding({
 *   code,          // compiled ES module JavaScript of toolset.ts (no imports)
 *   exportName,    // the binding's function name
 *   args,          // unknown[]: positional arguments, JSON values, in parameter order
 *   env,           // Record<string,string>: becomes the frozen global `env` inside the toolset
 *   secrets,       // optional Record<name,value>: filled in at egress only (`{{secret:NAME}}`, hmac)
 *   allowedHosts,  // string[]: `api.example.com`, `api.example.com:8443`, `*.example.com`, `*`
 *   timeoutMs,     // the toolset's own deadline (must be <= the deadline ceiling, 10 min)
 *   fetch,         // optional (req, signal) => Promise<HostFetchResponse>; default: platform fetch
 *   redact,        // optional string[]: secret values replaced by "***" in value, error and logs
 *   limits,        // optional Partial<SandboxLimits>; maxCalls caps the number of fetch calls
 *   signal,        // optional AbortSignal: cancels the run
 * });
 * // r: { ok: true, value, logs, durationMs } | { ok: false, error: { kind, message }, logs, durationMs }
 * ```
 * Inside the toolset, `hmac(secretName, data, { algorithm?, encoding? })` resolves to the signature,
 * and `fetch(url, { method, headers, body })` resolves to
 * `{ status, statusText, ok, url, headers: { get, has, entries, forEach }, text(), json() }`.
 * The pool checks every URL against `allowedHosts` BEFORE the callback is called; a given
 * `fetch` callback must itself re-check redirect targets (the default one does).
 * Error kinds: "threw" (the binding threw or fetch failed and was not caught), "timeout",
 * "out_of_memory", "internal". Bodies are strings; a non-string `body` is a TypeError. A failed
 * `fetch` or `hmac` raises an error whose `error` is a code of binding-host.ts (`permission_denied`
 * for a host the toolset does not allow).
 *
 * The parts: pool-scheduler.ts (per-key queues and caps), pool-watchdog.ts (deadlines, idle
 * workers), pool-workers.ts (starting a worker), pool-runs.ts (a run from submission to outcome),
 * pool-host-calls.ts (a guest's host call) and pool-bindings.ts (a binding call, served by the
 * shared binding-host.ts); this file wires them to the workers' messages.
 */
import { availableParallelism } from "node:os";
import type { BindingRuntime } from "./binding-runtime";
import { DEFAULT_LIMITS, resolveLimits, type SandboxLimits } from "./limits";
import { createCodeCache, runPoolBinding } from "./pool-bindings";
import { createHostCallHandler } from "./pool-host-calls";
import {
  failure,
  type HostCallControl,
  type HostCallReply,
  type PendingJob,
  type PoolCounters,
  type Slot,
} from "./pool-jobs";
import { createRunTable, POOL_CLOSED } from "./pool-runs";
import { createRunScheduler } from "./pool-scheduler";
import { createWatchdog, exitFailure } from "./pool-watchdog";
import { createWorkerSpawner } from "./pool-workers";
import type { FromWorker, FromWorkerPost, GuestNondet, Job, ToWorker, WorkerOutcome } from "./protocol";

export type { GuestCallError, HostCallControl, HostCallReply } from "./pool-jobs";

export interface RunActionRequest {
  code: string;
  input?: unknown;
  /** Mounted modules: module name -> export names. Imports outside this map fail to load. */
  modules: Record<string, string[]>;
  /** Imported library modules (`lib/<name>` -> source), loaded in the guest; they can import nothing. */
  libraries?: Record<string, string>;
  limits?: Partial<SandboxLimits>;
  /** Called for every capability call the guest makes; `argsJson` is the guest's one snapshot. */
  onCall(name: string, argsJson: string, control: HostCallControl): Promise<HostCallReply>;
  signal?: AbortSignal;
  /**
   * Who the run is for (an API key, a user): the unit of fair share. Keys are served round-robin,
   * each with a cap on its running actions, and a worker only ever holds one key's runs at a time.
   * Default: one shared key.
   */
  fairnessKey?: string;
  /** Called when the run has to wait for a sandbox (and once it leaves the queue: `false`). */
  onQueued?(queued: boolean): void;
  /** The guest's clock readings to replay and its random seed (a durable run's replay). */
  nondet?: GuestNondet;
}

export interface SandboxRunResult extends WorkerOutcome {
  /** Wall time including queueing and approval waits. */
  durationMs: number;
}

export type { BindingResult, RunBindingRequest } from "./binding-runtime";

export interface SandboxPoolStats {
  workers: number;
  runningJobs: number;
  queuedJobs: number;
  /** Running jobs whose clock is suspended (waiting for a human): memory, no compute slot. */
  parkedJobs: number;
  /** Queued runs that gave up because they waited longer than the queue timeout. */
  queueTimeouts: number;
  /** Workers terminated by the watchdog or lost to a crash since the pool started. */
  workersReplaced: number;
  jobsStarted: number;
  /** TypeScript binding calls run in the worker of the action that called them. */
  bindingsInPlace: number;
  /** Copies of toolset code sent to workers (each worker gets a toolset's code once). */
  bindingCodeSent: number;
  /** Binding calls served by a warm context (the toolset's module already evaluated there). */
  bindingsWarm: number;
  /** Actions started in a worker's spare context (runtime, context and bridge made ahead). */
  actionsOnSpare: number;
  /** QuickJS disposals that failed inside workers (a leaked handle); zero in a healthy pool. */
  disposeFailures: number;
  /**
   * Messages the main thread took from workers. A worker sends what one turn of it produced as
   * one message: an in-place binding's end and the end of the action it served arrive together.
   */
  workerPosts: number;
}

/** The QuickJS pool runs actions, and is the binding runtime of TypeScript toolsets. */
export interface SandboxPool extends BindingRuntime {
  readonly language: "typescript";
  runAction(request: RunActionRequest): Promise<SandboxRunResult>;
  /** Start the workers now instead of on first use. */
  warm(): Promise<void>;
  stats(): SandboxPoolStats;
  close(): Promise<void>;
}

export interface SandboxPoolOptions {
  /** Worker threads kept warm: the compute the pool plans on. Default: the number of CPUs. */
  workers?: number;
  /**
   * Upper bound of worker threads. Beyond `workers`, a worker is added for a key that has none while
   * every other worker is busy with other keys' runs, and retired again after it is idle. A key
   * that holds no worker at all always gets one (so no key can starve another). Default 2 × workers.
   */
  maxWorkers?: number;
  /** Workers one key may hold at once. Default: `workers`. */
  maxWorkersPerKey?: number;
  /**
   * Runs of one key admitted at once (not counting those waiting for a human approval); more wait
   * in that key's queue. Default 64.
   */
  maxRunsPerKey?: number;
  /** A run that waited this long in the queue fails with a clear "timeout". Default 30 s. */
  queueTimeoutMs?: number;
  /** Where toolsets' declared hosts are really sent (host-fetch.ts, TOOLSTORE_EGRESS_ALIASES). */
  hostAliases?: Readonly<Record<string, string>>;
  /** Jobs held at once by one worker. Default 1024. */
  maxJobsPerWorker?: number;
  /**
   * Runs of one key that share a QuickJS WASM instance, each in its own runtime and context and
   * with its own memory cap. A parked run then costs about 0.1 MiB instead of 0.3. Default 16.
   */
  runtimesPerModule?: number;
  /** Idle QuickJS instances kept per worker. Default 4. */
  warmModules?: number;
  /** Idle instances beyond the most recently used one go once unused this long. Default 10 s. */
  idleModuleMs?: number;
  /** Instances whose memory grew past this take no new runs, and go once empty. Default 32 MiB. */
  retireAboveBytes?: number;
  /** How far past its deadline a pump may run before the worker is terminated. Default 250 ms. */
  watchdogGraceMs?: number;
  /** Defaults for jobs that do not set a limit. Checked against the ceilings. */
  defaultLimits?: Partial<SandboxLimits>;
  /** Path to worker-main.ts (or a compiled .js/.mjs). Default: found next to this file or under the cwd. */
  workerEntry?: string;
  /** Worker JS heap limit in MiB (guest memory is WASM, outside this). Default 256. */
  workerHeapMb?: number;
}

const MAX_START_FAILURES = 3;
/** An extra worker (beyond `workers`) idle this long goes, its memory with it. */
const IDLE_RETIRE_MS = 10_000;

export function createSandboxPool(options: SandboxPoolOptions = {}): SandboxPool {
  const workerCount = Math.max(1, options.workers ?? availableParallelism());
  const baseLimits = resolveLimits(options.defaultLimits, DEFAULT_LIMITS);
  const slots: Slot[] = [];
  const counters = newPoolCounters();
  const codes = createCodeCache();
  let closed = false;
  let startFailures = 0;

  const spawnWorker = createWorkerSpawner(options, { message: onPost, exit: onExit });
  const spawn = (key: string | undefined) => {
    const slot = spawnWorker(key);
    // Referenced until ready (someone may be awaiting warm()), then only while it has jobs.
    slots.push(slot);
    return slot;
  };
  const scheduler = createRunScheduler<PendingJob, Slot>({
    ...schedulerLimits(options, workerCount),
    slots,
    spawn,
    start: (job, slot) => runs.place(job, slot),
    timedOut: (job, message) => runs.settle(job, failure("timeout", message)),
  });
  const drain = () => {
    if (!closed) scheduler.drain();
  };
  const send = (slot: Slot, message: ToWorker) => {
    if (slot.alive) slot.worker.postMessage(message);
  };
  const runs = createRunTable({ scheduler, codes, counters, send, drain, isClosed: () => closed });
  const handleCall = createHostCallHandler({ send, admit: scheduler.admit, drain });
  const watchdog = createWatchdog({
    graceMs: options.watchdogGraceMs ?? 250,
    idleRetireMs: IDLE_RETIRE_MS,
    keepWorkers: workerCount,
    slots,
    overran(slot, jobId) {
      if (!slot.alive) return;
      slot.overrunJobId = jobId;
      stop(slot);
      drain();
    },
    idle: stop,
  });

  /** The worker leaves the pool now; its exit (onExit) settles what it still holds. */
  function stop(slot: Slot): void {
    if (!slot.alive) return;
    drop(slot);
    void slot.worker.terminate();
  }

  function drop(slot: Slot): void {
    slot.alive = false;
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
  }

  function onPost(slot: Slot, post: FromWorkerPost): void {
    counters.workerPosts += 1;
    if (post.t !== "batch") onMessage(slot, post);
    else for (const message of post.messages) onMessage(slot, message);
  }

  function onMessage(slot: Slot, message: FromWorker): void {
    if (message.t === "ready") {
      slot.isReady = true;
      startFailures = 0;
      if (slot.jobs.size === 0) slot.worker.unref();
      slot.markReady();
      return;
    }
    const job = slot.jobs.get(message.id);
    if (!job) return;
    if (message.t === "call") {
      // The guest now waits for the host: its worker may take another run of the same key.
      slot.computing.delete(job.id);
      void handleCall(slot, job, message.callId, message.name, message.json, message.clock);
      if (slot.computing.size === 0) drain();
      return;
    }
    if (message.outcome.warm) counters.bindingsWarm += 1;
    if (message.outcome.spare) counters.actionsOnSpare += 1;
    runs.release(slot, job);
    runs.settle(job, message.outcome);
    drain();
  }

  function onExit(slot: Slot, code: number): void {
    const wasAlive = slot.alive;
    drop(slot);
    for (const job of [...slot.jobs.values()]) {
      runs.release(slot, job);
      // A worker only holds one key's runs, so an overrun never takes down another key's run.
      runs.settle(job, exitFailure(slot, { id: job.id, deadlineMs: job.job.limits.deadlineMs }, code));
    }
    if (wasAlive || slot.overrunJobId !== undefined) counters.workersReplaced += 1;
    // A worker that dies before it is ready will not do better next time: stop the loop.
    if (!slot.isReady && wasAlive && ++startFailures >= MAX_START_FAILURES) {
      const reason = `sandbox workers fail to start: ${slot.lastError ?? `exit code ${code}`}`;
      for (const job of scheduler.takeAll()) runs.settle(job, failure("internal", reason));
      return;
    }
    drain();
  }

  return {
    language: "typescript",
    async runAction(request) {
      const limits = resolveLimits(request.limits, baseLimits);
      const inputJson = request.input === undefined ? "null" : JSON.stringify(request.input);
      const job: Job = {
        kind: "action",
        code: request.code,
        limits,
        inputJson,
        modules: request.modules,
        ...(request.nondet ? { nondet: request.nondet } : {}),
      };
      if (request.libraries) job.libraries = request.libraries;
      const { onCall, signal, onQueued } = request;
      return runs.submit(job, request.fairnessKey ?? "", { onCall, signal, onQueued });
    },
    async runBinding(request) {
      const limits = resolveLimits({ ...request.limits, deadlineMs: request.timeoutMs }, baseLimits);
      return runPoolBinding(request, limits, options.hostAliases, runs.submit);
    },
    async warm() {
      while (slots.length < workerCount) spawn(undefined);
      await Promise.all(slots.map((s) => s.ready));
    },
    stats: () => poolStats(slots, counters, scheduler, codes.sent()),
    async close() {
      closed = true;
      watchdog.stop();
      for (const job of scheduler.takeAll()) runs.cancel(job, POOL_CLOSED);
      const all = slots.splice(0);
      for (const slot of all) slot.alive = false;
      await Promise.all(all.map((slot) => slot.worker.terminate()));
    },
  };
}

function schedulerLimits(options: SandboxPoolOptions, workerCount: number) {
  return {
    maxWorkers: Math.max(workerCount, options.maxWorkers ?? 2 * workerCount),
    maxWorkersPerKey: Math.max(1, options.maxWorkersPerKey ?? workerCount),
    maxRunsPerKey: Math.max(1, options.maxRunsPerKey ?? 64),
    maxJobsPerWorker: options.maxJobsPerWorker ?? 1024,
    queueTimeoutMs: options.queueTimeoutMs ?? 30_000,
  };
}

function newPoolCounters(): PoolCounters {
  return {
    workersReplaced: 0,
    jobsStarted: 0,
    bindingsInPlace: 0,
    bindingsWarm: 0,
    actionsOnSpare: 0,
    disposeFailures: 0,
    workerPosts: 0,
  };
}

function poolStats(
  slots: readonly Slot[],
  counters: PoolCounters,
  scheduler: { queued(): number; queueTimeouts(): number },
  bindingCodeSent: number,
): SandboxPoolStats {
  let runningJobs = 0;
  let parkedJobs = 0;
  for (const slot of slots) {
    runningJobs += slot.jobs.size;
    for (const job of slot.jobs.values()) if (job.suspended > 0) parkedJobs += 1;
  }
  return {
    workers: slots.length,
    runningJobs,
    queuedJobs: scheduler.queued(),
    parkedJobs,
    queueTimeouts: scheduler.queueTimeouts(),
    disposeFailures: counters.disposeFailures,
    workersReplaced: counters.workersReplaced,
    jobsStarted: counters.jobsStarted,
    bindingsInPlace: counters.bindingsInPlace,
    bindingCodeSent,
    bindingsWarm: counters.bindingsWarm,
    actionsOnSpare: counters.actionsOnSpare,
    workerPosts: counters.workerPosts,
  };
}
