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
 * "out_of_memory", "internal". Bodies are strings; a non-string `body` is a TypeError.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { dirname, join, resolve as resolvePath } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { bindingFactorySource } from "./binding-factory";
import type { BindingResult, BindingRuntime, RunBindingRequest } from "./binding-runtime";
import { createEgressFetch, type HmacRequest, hmacWithSecret, redactSecrets } from "./egress";
import { type HostFetchRequest, isHostAllowed } from "./host-fetch";
import { DEFAULT_LIMITS, resolveLimits, type SandboxLimits } from "./limits";
import {
  type BindingJob,
  type FromWorker,
  type Job,
  type SandboxError,
  type ToWorker,
  WATCHDOG_ACTION_SLOT,
  WATCHDOG_BYTES,
  type WorkerInit,
  type WorkerOutcome,
} from "./protocol";
import { bundledWorkerEntry } from "./worker-build";

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
}

/** The guest call behind `HostCallControl.call`. It settles once, so it serves one binding. */
class GuestCall {
  used = false;
  /** The binding ended well and its worker settled the guest's promise with its result. */
  delivered = false;
  constructor(
    readonly slot: Slot,
    readonly job: PendingJob,
    readonly callId: number,
  ) {}
}

export interface RunActionRequest {
  code: string;
  input?: unknown;
  /** Mounted modules: module name -> export names. Imports outside this map fail to load. */
  modules: Record<string, string[]>;
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
  /** QuickJS disposals that failed inside workers (a leaked handle); zero in a healthy pool. */
  disposeFailures: number;
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

interface PendingJob {
  id: number;
  job: Job;
  key: string;
  slot?: Slot;
  /** A binding run in its caller's worker: the guest call its result settles there. */
  deliver?: { id: number; callId: number };
  startedAt: number;
  /** Clock suspensions in progress (approval waits): a parked job holds no compute slot. */
  suspended: number;
  queueTimer?: ReturnType<typeof setTimeout>;
  onQueued?: (queued: boolean) => void;
  onCall: (name: string, json: string, control: HostCallControl) => Promise<HostCallReply>;
  done: AbortController;
  resolve(outcome: WorkerOutcome): void;
}

interface Slot {
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
  /** Ids of the binding code this worker was sent (`BindingJob.codeId`). */
  codes: Set<number>;
}

/** Binding code at least this long goes to each worker once, then by id. */
const CODE_BY_ID_MIN_CHARS = 1024;
/** Code ids one worker is sent at most; further code goes with every job. */
const MAX_CODES_PER_WORKER = 256;
const MAX_CODE_IDS = 1000;

const MAX_START_FAILURES = 3;
const JOB_ENDED = Object.freeze({ name: "JobEnded", message: "the sandbox job ended" });

const WORKER_BOOTSTRAP = `
const { workerData } = require("node:worker_threads");
(async () => {
  if (workerData.entry.endsWith(".ts")) {
    const api = await import(workerData.tsxApi);
    api.register();
  }
  await import(workerData.entryUrl);
})().catch((error) => {
  setImmediate(() => { throw error; });
});
`;

function findWorkerEntry(explicit?: string): string {
  if (explicit) return explicit;
  const candidates: string[] = [];
  try {
    candidates.push(join(dirname(fileURLToPath(import.meta.url)), "worker-main.ts"));
  } catch {
    // import.meta.url is not a file URL (bundled); fall through to the cwd.
  }
  candidates.push(resolvePath(process.cwd(), "server/core/sandbox/worker-main.ts"));
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`sandbox worker entry not found (looked in ${candidates.join(", ")})`);
  return found;
}

/** tsx's ESM API, which lets the worker load worker-main.ts. Bundlers mangle some of these lookups. */
function findTsxApi(): string {
  try {
    const resolved = import.meta.resolve?.("tsx/esm/api");
    if (resolved) return resolved;
  } catch {
    // Not supported here (some test runners, bundles); try the package folder.
  }
  try {
    const pkg = createRequire(import.meta.url).resolve("tsx/package.json");
    return pathToFileURL(join(dirname(pkg), "dist/esm/api/index.mjs")).href;
  } catch {
    // Bundled: fall through to the project's node_modules.
  }
  const local = resolvePath(process.cwd(), "node_modules/tsx/dist/esm/api/index.mjs");
  return existsSync(local) ? pathToFileURL(local).href : "tsx/esm/api";
}

function encodeReply(reply: HostCallReply): { ok: boolean; json: string } {
  if (!reply.ok) return { ok: false, json: JSON.stringify(reply.error) };
  try {
    return { ok: true, json: JSON.stringify(reply.value) ?? "" };
  } catch (error) {
    const message = `capability returned a value that is not JSON: ${(error as Error).message}`;
    return { ok: false, json: JSON.stringify({ error: "internal", message }) };
  }
}

export function createSandboxPool(options: SandboxPoolOptions = {}): SandboxPool {
  const workerCount = Math.max(1, options.workers ?? availableParallelism());
  const maxWorkers = Math.max(workerCount, options.maxWorkers ?? 2 * workerCount);
  const maxWorkersPerKey = Math.max(1, options.maxWorkersPerKey ?? workerCount);
  const maxRunsPerKey = Math.max(1, options.maxRunsPerKey ?? 64);
  const queueTimeoutMs = options.queueTimeoutMs ?? 30_000;
  const maxJobsPerWorker = options.maxJobsPerWorker ?? 1024;
  const graceMs = options.watchdogGraceMs ?? 250;
  const baseLimits = resolveLimits(options.defaultLimits, DEFAULT_LIMITS);
  const source = findWorkerEntry(options.workerEntry);
  const entryFor = () => (source.endsWith(".ts") ? (bundledWorkerEntry(source) ?? source) : source);
  let entry = entryFor();
  const tsxApi = findTsxApi();
  const idleRetireMs = 10_000;

  const slots: Slot[] = [];
  /** Queued jobs per key; the Map's order is the round-robin order (a served key moves to the end). */
  const queues = new Map<string, PendingJob[]>();
  /** Admitted (started, not parked, not ended) jobs per key. */
  const admitted = new Map<string, number>();
  let queuedCount = 0;
  let nextJobId = 0;
  let closed = false;
  let workersReplaced = 0;
  let startFailures = 0;
  let jobsStarted = 0;
  let bindingsInPlace = 0;
  let bindingCodeSent = 0;
  let bindingsWarm = 0;
  let disposeFailures = 0;
  let queueTimeouts = 0;
  /** Binding code by content, for `BindingJob.codeId` (ids are never reused). */
  const codeIds = new Map<string, number>();
  let nextCodeId = 0;

  function spawn(key: string | undefined): Slot {
    // A bundle pruned by a newer process while this one ran for a week is written again.
    if (entry !== source && !existsSync(entry)) entry = entryFor();
    const sab = new SharedArrayBuffer(WATCHDOG_BYTES);
    const init: WorkerInit & { entry: string; entryUrl: string; tsxApi: string } = {
      watchdog: sab,
      warmModules: options.warmModules ?? 4,
      retireAboveBytes: options.retireAboveBytes ?? 32 * 1024 * 1024,
      runtimesPerModule: Math.max(1, options.runtimesPerModule ?? 16),
      entry,
      entryUrl: pathToFileURL(entry).href,
      tsxApi,
    };
    const worker = new Worker(WORKER_BOOTSTRAP, {
      eval: true,
      workerData: init,
      resourceLimits: { stackSizeMb: 8, maxOldGenerationSizeMb: options.workerHeapMb ?? 256 },
      stdout: false,
      stderr: false,
    });
    let markReady: () => void = () => {};
    const slot: Slot = {
      worker,
      key,
      jobs: new Map(),
      computing: new Set(),
      idleSince: Date.now(),
      watchdogDeadline: new Float64Array(sab, 0, 1),
      watchdogIds: new Int32Array(sab),
      alive: true,
      isReady: false,
      codes: new Set(),
      ready: new Promise<void>((r) => {
        markReady = r;
      }),
    };
    worker.on("message", (message: FromWorker) => onMessage(slot, message, markReady));
    worker.on("error", (error) => {
      // 'exit' follows and settles the jobs; keep the reason for their error message.
      slot.lastError = error.message;
    });
    worker.on("exit", (code) => onExit(slot, code));
    // Referenced until ready (someone may be awaiting warm()), then only while it has jobs.
    slots.push(slot);
    return slot;
  }

  function onMessage(slot: Slot, message: FromWorker, markReady: () => void): void {
    switch (message.t) {
      case "ready":
        slot.isReady = true;
        startFailures = 0;
        if (slot.jobs.size === 0) slot.worker.unref();
        markReady();
        break;
      case "call": {
        const job = slot.jobs.get(message.id);
        if (!job) break;
        // The guest now waits for the host: its worker may take another run of the same key.
        slot.computing.delete(job.id);
        void handleCall(slot, job, message.callId, message.name, message.json);
        if (slot.computing.size === 0) drain();
        break;
      }
      case "done": {
        const job = slot.jobs.get(message.id);
        if (!job) break;
        if (message.outcome.warm) bindingsWarm += 1;
        release(slot, job);
        settle(job, message.outcome);
        drain();
        break;
      }
    }
  }

  /** The job leaves its worker (done or cancelled): the worker may change hands once empty. */
  function release(slot: Slot, job: PendingJob): void {
    slot.jobs.delete(job.id);
    slot.computing.delete(job.id);
    if (job.suspended === 0) addAdmitted(job.key, -1);
    if (slot.jobs.size === 0) {
      slot.worker.unref();
      slot.key = undefined;
      slot.idleSince = Date.now();
    }
  }

  function addAdmitted(key: string, delta: number): void {
    const n = (admitted.get(key) ?? 0) + delta;
    if (n <= 0) admitted.delete(key);
    else admitted.set(key, n);
  }

  async function handleCall(slot: Slot, job: PendingJob, callId: number, name: string, json: string) {
    let suspended = 0;
    const resume = () => {
      suspended -= 1;
      job.suspended -= 1;
      // Back from a human: it counts against its key's cap again.
      if (job.suspended === 0 && slot.jobs.get(job.id) === job) addAdmitted(job.key, 1);
      send(slot, { t: "clock", id: job.id, suspended: false });
    };
    const call = job.job.kind === "action" ? new GuestCall(slot, job, callId) : undefined;
    const control: HostCallControl = {
      signal: job.done.signal,
      ...(call ? { call } : {}),
      suspendClock: () => {
        let open = true;
        suspended += 1;
        job.suspended += 1;
        // Waiting for a human costs memory, not compute: the key's cap no longer counts it.
        if (job.suspended === 1 && slot.jobs.get(job.id) === job) {
          addAdmitted(job.key, -1);
          drain();
        }
        send(slot, { t: "clock", id: job.id, suspended: true });
        return () => {
          if (!open) return;
          open = false;
          resume();
        };
      },
    };
    let reply: HostCallReply;
    try {
      reply = await job.onCall(name, json, control);
    } catch (error) {
      reply = {
        ok: false,
        error: { error: "internal", message: `host call failed: ${(error as Error).message}` },
      };
    }
    while (suspended > 0) resume();
    if (slot.jobs.get(job.id) !== job) return;
    slot.computing.add(job.id);
    // Settled in the worker already, with the same value (a binding's result is the call's).
    if (call?.delivered && reply.ok) return;
    send(slot, { t: "reply", id: job.id, callId, ...encodeReply(reply) });
  }

  function send(slot: Slot, message: ToWorker): void {
    if (slot.alive) slot.worker.postMessage(message);
  }

  function settle(job: PendingJob, outcome: WorkerOutcome): void {
    if (job.queueTimer) clearTimeout(job.queueTimer);
    // A plain reason: abort() without one builds a DOMException with a stack, per job.
    job.done.abort(JOB_ENDED);
    disposeFailures += outcome.disposeFailures;
    job.resolve(outcome);
  }

  function failure(kind: SandboxError["kind"], message: string): WorkerOutcome {
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

  function onExit(slot: Slot, code: number): void {
    const wasAlive = slot.alive;
    slot.alive = false;
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    for (const job of [...slot.jobs.values()]) {
      release(slot, job);
      // A worker only holds one key's runs, so an overrun never takes down another key's run.
      settle(
        job,
        job.id === slot.overrunJobId
          ? failure(
              "timeout",
              `the run overran its deadline of ${job.job.limits.deadlineMs} ms inside a long built-in call; its sandbox was terminated`,
            )
          : slot.overrunJobId !== undefined
            ? failure(
                "internal",
                "the sandbox worker was replaced because another run in it (of the same key, or a toolset binding one of them called) overran its deadline",
              )
            : failure(
                "internal",
                `the sandbox worker exited unexpectedly (code ${code}${slot.lastError ? `: ${slot.lastError}` : ""})`,
              ),
      );
    }
    if (wasAlive || slot.overrunJobId !== undefined) workersReplaced += 1;
    if (!slot.isReady && wasAlive) {
      // A worker that dies before it is ready will not do better next time: stop the loop.
      startFailures += 1;
      if (startFailures >= MAX_START_FAILURES) {
        const reason = `sandbox workers fail to start: ${slot.lastError ?? `exit code ${code}`}`;
        for (const list of queues.values()) for (const job of list) settle(job, failure("internal", reason));
        queues.clear();
        queuedCount = 0;
        return;
      }
    }
    if (!closed) drain();
  }

  function terminate(slot: Slot, overrunJobId: number): void {
    if (!slot.alive) return;
    slot.alive = false;
    slot.overrunJobId = overrunJobId;
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    void slot.worker.terminate();
    if (!closed) drain();
  }

  const watchdog = setInterval(
    () => {
      const now = Date.now();
      for (const slot of [...slots]) {
        const deadline = slot.watchdogDeadline[0] ?? 0;
        if (deadline > 0 && now > deadline + graceMs) {
          terminate(slot, slot.watchdogIds[WATCHDOG_ACTION_SLOT] ?? -1);
        } else if (
          slots.length > workerCount &&
          slot.jobs.size === 0 &&
          slot.isReady &&
          now - slot.idleSince > idleRetireMs
        ) {
          // An extra worker that has been idle a while goes (its memory with it).
          slot.alive = false;
          slots.splice(slots.indexOf(slot), 1);
          void slot.worker.terminate();
        }
      }
    },
    Math.max(20, Math.min(100, graceMs / 2)),
  );
  watchdog.unref();

  /**
   * A worker for the next run of `key`: one of its own that is not computing, else a free one, else
   * a new one. Workers are never shared between keys, so a runaway of one key can only slow down
   * or (watchdog) take down that key's own runs.
   */
  function pickSlot(key: string): Slot | undefined {
    let held = 0;
    let own: Slot | undefined;
    let free: Slot | undefined;
    for (const slot of slots) {
      if (!slot.alive) continue;
      if (slot.key === key) {
        held += 1;
        if (
          slot.computing.size === 0 &&
          slot.jobs.size < maxJobsPerWorker &&
          (!own || slot.jobs.size > own.jobs.size)
        )
          own = slot;
      } else if (slot.key === undefined && slot.jobs.size === 0 && !free) free = slot;
    }
    if (own) return own;
    if (held >= maxWorkersPerKey) return undefined;
    if (free) {
      free.key = key;
      return free;
    }
    if (slots.length < maxWorkers || held === 0) return spawn(key);
    return undefined;
  }

  function drain(): void {
    if (closed) return;
    let progressed = true;
    while (progressed && queuedCount > 0) {
      progressed = false;
      for (const [key, list] of [...queues]) {
        const job = list[0];
        if (!job) continue;
        if ((admitted.get(key) ?? 0) >= maxRunsPerKey) continue;
        const slot = pickSlot(key);
        if (!slot) continue;
        list.shift();
        queuedCount -= 1;
        // Round-robin: the key just served goes to the back of the line.
        queues.delete(key);
        if (list.length > 0) queues.set(key, list);
        place(job, slot);
        progressed = true;
      }
    }
  }

  function place(job: PendingJob, slot: Slot): void {
    if (job.queueTimer) clearTimeout(job.queueTimer);
    job.queueTimer = undefined;
    if (job.onQueued) {
      try {
        job.onQueued(false);
      } catch {
        // A listener must not break the pool.
      }
      job.onQueued = undefined;
    }
    job.slot = slot;
    slot.jobs.set(job.id, job);
    slot.computing.add(job.id);
    addAdmitted(job.key, 1);
    slot.worker.ref();
    jobsStarted += 1;
    const queuedMs = Date.now() - job.startedAt;
    const sent = job.job.kind === "binding" ? byCodeId(slot, job.job) : job.job;
    send(slot, {
      t: "start",
      id: job.id,
      job: queuedMs > 0 ? { ...sent, queuedMs } : sent,
      ...(job.deliver ? { deliver: job.deliver } : {}),
    });
  }

  /** A toolset's code (tens of KiB) is copied to a worker once, not on every call. */
  function byCodeId(slot: Slot, job: BindingJob): BindingJob {
    if (job.code.length < CODE_BY_ID_MIN_CHARS) return job;
    let id = codeIds.get(job.code);
    if (id === undefined) {
      if (codeIds.size >= MAX_CODE_IDS) codeIds.clear();
      id = ++nextCodeId;
      codeIds.set(job.code, id);
    }
    if (slot.codes.has(id)) return { ...job, code: "", codeId: id };
    bindingCodeSent += 1;
    if (slot.codes.size >= MAX_CODES_PER_WORKER) return job;
    slot.codes.add(id);
    return { ...job, codeId: id };
  }

  function unqueue(job: PendingJob): boolean {
    const list = queues.get(job.key);
    const at = list ? list.indexOf(job) : -1;
    if (!list || at < 0) return false;
    list.splice(at, 1);
    queuedCount -= 1;
    if (list.length === 0) queues.delete(job.key);
    return true;
  }

  function submit(
    job: Job,
    key: string,
    onCall: PendingJob["onCall"],
    signal: AbortSignal | undefined,
    onQueued?: (queued: boolean) => void,
    here?: GuestCall,
  ): Promise<SandboxRunResult> {
    if (closed) return Promise.reject(new Error("sandbox pool is closed"));
    const startedAt = Date.now();
    return new Promise<SandboxRunResult>((resolve) => {
      const pending: PendingJob = {
        id: ++nextJobId,
        job,
        key,
        startedAt,
        suspended: 0,
        onCall,
        done: new AbortController(),
        resolve: (outcome) => resolve({ ...outcome, durationMs: Date.now() - startedAt }),
      };
      if (signal) {
        const onAbort = () => cancel(pending, String(signal.reason ?? "aborted"));
        if (signal.aborted) {
          onAbort();
          return;
        }
        signal.addEventListener("abort", onAbort, { once: true });
        pending.done.signal.addEventListener("abort", () => signal.removeEventListener("abort", onAbort));
      }
      if (here) {
        // Its caller's worker: no queue (the caller holds its place), no other worker to wake.
        here.used = true;
        pending.deliver = { id: here.job.id, callId: here.callId };
        bindingsInPlace += 1;
        place(pending, here.slot);
        return;
      }
      const list = queues.get(key);
      if (list) list.push(pending);
      else queues.set(key, [pending]);
      queuedCount += 1;
      drain();
      if (pending.slot || pending.done.signal.aborted) return;
      // Still queued: say so, and give up with a clear error after the queue timeout.
      if (onQueued) {
        pending.onQueued = onQueued;
        try {
          onQueued(true);
        } catch {
          // A listener must not break the pool.
        }
      }
      // The deadline runs from submission, so a run never waits in the queue past it either.
      const deadlineMs = job.limits.deadlineMs;
      const waitMs = Math.min(queueTimeoutMs, deadlineMs);
      pending.queueTimer = setTimeout(() => {
        if (!unqueue(pending)) return;
        queueTimeouts += 1;
        const ahead = admitted.get(key) ?? 0;
        const others = `${ahead} other run${ahead === 1 ? "" : "s"} of the same key running`;
        settle(
          pending,
          failure(
            "timeout",
            waitMs === deadlineMs
              ? `the run reached its deadline of ${deadlineMs} ms while it waited in the queue for a sandbox (${others}); nothing of it ran, try again later`
              : `the run waited ${queueTimeoutMs} ms in the queue for a sandbox and did not start (${others}); nothing of it ran, try again later`,
          ),
        );
      }, waitMs);
      pending.queueTimer.unref?.();
    });
  }

  function cancel(job: PendingJob, reason: string): void {
    if (job.done.signal.aborted) return;
    unqueue(job);
    const slot = job.slot;
    if (slot?.jobs.get(job.id) === job) {
      release(slot, job);
      send(slot, { t: "cancel", id: job.id, reason });
    }
    // Closing the pool is the server's doing; anything else is the surface stopping its run.
    settle(job, failure(reason === "sandbox pool closed" ? "internal" : "cancelled", `cancelled: ${reason}`));
    drain();
  }

  async function runAction(request: RunActionRequest): Promise<SandboxRunResult> {
    const limits = resolveLimits(request.limits, baseLimits);
    const inputJson = request.input === undefined ? "null" : JSON.stringify(request.input);
    const job: Job = { kind: "action", code: request.code, limits, inputJson, modules: request.modules };
    return submit(job, request.fairnessKey ?? "", request.onCall, request.signal, request.onQueued);
  }

  async function runBinding(request: RunBindingRequest): Promise<BindingResult> {
    const limits = resolveLimits({ ...request.limits, deadlineMs: request.timeoutMs }, baseLimits);
    // Egress (egress.ts) fills `{{secret:NAME}}` placeholders for declared hosts and masks values.
    const hostFetch = createEgressFetch({
      allowedHosts: request.allowedHosts,
      secrets: request.secrets,
      redact: request.redact,
      timeoutMs: limits.deadlineMs,
      maxBodyBytes: 4 << 20,
      fetch: request.fetch,
      ...(options.hostAliases ? { hostAliases: options.hostAliases } : {}),
    });
    const masked = [...Object.values(request.secrets ?? {}), ...(request.redact ?? [])];
    const job: Job = {
      kind: "binding",
      // A factory of the module, so each call gets fresh module state even in a warm context.
      code: bindingFactorySource(request.code),
      limits,
      exportName: request.exportName,
      argsJson: JSON.stringify(request.args),
      envJson: JSON.stringify(request.env),
    };
    const onCall = async (name: string, json: string, control: HostCallControl): Promise<HostCallReply> => {
      if (name === "hmac") {
        try {
          return { ok: true, value: hmacWithSecret(JSON.parse(json) as HmacRequest, request.secrets ?? {}) };
        } catch (error) {
          return { ok: false, error: { error: "bad_input", message: (error as Error).message } };
        }
      }
      if (name !== "fetch")
        return { ok: false, error: { error: "bad_input", message: `unknown host call ${name}` } };
      let req: HostFetchRequest;
      try {
        req = JSON.parse(json) as HostFetchRequest;
      } catch {
        return { ok: false, error: { error: "bad_input", message: "malformed fetch request" } };
      }
      if (!isHostAllowed(req.url, request.allowedHosts)) {
        return {
          ok: false,
          error: {
            error: "permission_denied",
            message: `host not allowed for this toolset: ${hostOf(req.url)}`,
          },
        };
      }
      try {
        return { ok: true, value: await hostFetch(req, control.signal) };
      } catch (error) {
        return { ok: false, error: { error: "fetch_failed", message: (error as Error).message } };
      }
    };
    // In the calling action's worker when nothing needs masking on the way back (the result goes
    // straight to the guest); else a toolset's calls are their own lane, never behind the actions
    // that wait for them.
    const caller = request.caller;
    const here =
      caller instanceof GuestCall &&
      !caller.used &&
      masked.length === 0 &&
      caller.slot.alive &&
      caller.slot.jobs.get(caller.job.id) === caller.job
        ? caller
        : undefined;
    const outcome = await submit(
      job,
      `toolset:${request.trustDomain ?? ""}`,
      onCall,
      request.signal,
      undefined,
      here,
    );
    if (here && outcome.ok) here.delivered = true;
    const redact = (text: string) => redactSecrets(text, masked);
    const logs = outcome.logs.map((l) => ({ level: l.level, text: redact(l.text) }));
    if (!outcome.ok) {
      const error = outcome.error ?? { kind: "internal" as const, message: "unknown failure" };
      return {
        ok: false,
        error: { kind: error.kind, message: redact(error.message) },
        logs,
        durationMs: outcome.durationMs,
      };
    }
    const json = outcome.resultJson === null ? "null" : redact(outcome.resultJson);
    let value: unknown = null;
    try {
      value = JSON.parse(json);
    } catch {
      // Redaction broke the JSON (a secret spanning syntax); return it as text.
      value = json;
    }
    return { ok: true, value, logs, durationMs: outcome.durationMs };
  }

  return {
    language: "typescript",
    runAction,
    runBinding,
    async warm() {
      while (slots.length < workerCount) spawn(undefined);
      await Promise.all(slots.map((s) => s.ready));
    },
    stats() {
      let runningJobs = 0;
      let parkedJobs = 0;
      for (const slot of slots) {
        runningJobs += slot.jobs.size;
        for (const job of slot.jobs.values()) if (job.suspended > 0) parkedJobs += 1;
      }
      return {
        workers: slots.length,
        runningJobs,
        queuedJobs: queuedCount,
        parkedJobs,
        queueTimeouts,
        disposeFailures,
        workersReplaced,
        jobsStarted,
        bindingsInPlace,
        bindingCodeSent,
        bindingsWarm,
      };
    },
    async close() {
      closed = true;
      clearInterval(watchdog);
      for (const list of [...queues.values()])
        for (const job of [...list]) cancel(job, "sandbox pool closed");
      const all = [...slots];
      slots.length = 0;
      for (const slot of all) slot.alive = false;
      await Promise.all(all.map((slot) => slot.worker.terminate()));
    },
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return JSON.stringify(url.slice(0, 100));
  }
}
