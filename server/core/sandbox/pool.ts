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
import type { BindingResult, BindingRuntime, RunBindingRequest } from "./binding-runtime";
import { createEgressFetch, type HmacRequest, hmacWithSecret, redactSecrets } from "./egress";
import { type HostFetchRequest, isHostAllowed } from "./host-fetch";
import { DEFAULT_LIMITS, resolveLimits, type SandboxLimits } from "./limits";
import {
  type FromWorker,
  type Job,
  type SandboxError,
  type ToWorker,
  WATCHDOG_ACTION_SLOT,
  WATCHDOG_BYTES,
  type WorkerInit,
  type WorkerOutcome,
} from "./protocol";

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
  /** Workers terminated by the watchdog or lost to a crash since the pool started. */
  workersReplaced: number;
  jobsStarted: number;
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
  /** Worker threads. Default: min(2, available CPUs). */
  workers?: number;
  /** Jobs running at once in one worker (each holds its own QuickJS module); more are queued. Default 64. */
  maxJobsPerWorker?: number;
  /** Idle QuickJS modules kept per worker and memory size. Default 4. */
  warmModules?: number;
  /** Modules whose memory grew past this are not reused. Default 32 MiB. */
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
  slot?: Slot;
  startedAt: number;
  onCall: (name: string, json: string, control: HostCallControl) => Promise<HostCallReply>;
  done: AbortController;
  resolve(outcome: WorkerOutcome): void;
}

interface Slot {
  worker: Worker;
  jobs: Map<number, PendingJob>;
  watchdogDeadline: Float64Array;
  watchdogIds: Int32Array;
  alive: boolean;
  /** Set when the watchdog terminated the worker for this job id. */
  overrunJobId?: number;
  isReady: boolean;
  lastError?: string;
  ready: Promise<void>;
}

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
  const workerCount = Math.max(1, options.workers ?? Math.min(2, availableParallelism()));
  const maxJobsPerWorker = options.maxJobsPerWorker ?? 64;
  const graceMs = options.watchdogGraceMs ?? 250;
  const baseLimits = resolveLimits(options.defaultLimits, DEFAULT_LIMITS);
  const entry = findWorkerEntry(options.workerEntry);
  const tsxApi = findTsxApi();

  const slots: Slot[] = [];
  const queue: PendingJob[] = [];
  let nextJobId = 0;
  let closed = false;
  let workersReplaced = 0;
  let startFailures = 0;
  let jobsStarted = 0;
  let disposeFailures = 0;

  function spawn(): Slot {
    const sab = new SharedArrayBuffer(WATCHDOG_BYTES);
    const init: WorkerInit & { entry: string; entryUrl: string; tsxApi: string } = {
      watchdog: sab,
      warmModules: options.warmModules ?? 4,
      retireAboveBytes: options.retireAboveBytes ?? 32 * 1024 * 1024,
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
      jobs: new Map(),
      watchdogDeadline: new Float64Array(sab, 0, 1),
      watchdogIds: new Int32Array(sab),
      alive: true,
      isReady: false,
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
        if (job) void handleCall(slot, job, message.callId, message.name, message.json);
        break;
      }
      case "done": {
        const job = slot.jobs.get(message.id);
        if (!job) break;
        slot.jobs.delete(message.id);
        if (slot.jobs.size === 0) slot.worker.unref();
        settle(job, message.outcome);
        drain();
        break;
      }
    }
  }

  async function handleCall(slot: Slot, job: PendingJob, callId: number, name: string, json: string) {
    let suspended = 0;
    const control: HostCallControl = {
      signal: job.done.signal,
      suspendClock: () => {
        let open = true;
        suspended += 1;
        send(slot, { t: "clock", id: job.id, suspended: true });
        return () => {
          if (!open) return;
          open = false;
          suspended -= 1;
          send(slot, { t: "clock", id: job.id, suspended: false });
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
    while (suspended > 0) {
      suspended -= 1;
      send(slot, { t: "clock", id: job.id, suspended: false });
    }
    if (slot.jobs.get(job.id) !== job) return;
    send(slot, { t: "reply", id: job.id, callId, ...encodeReply(reply) });
  }

  function send(slot: Slot, message: ToWorker): void {
    if (slot.alive) slot.worker.postMessage(message);
  }

  function settle(job: PendingJob, outcome: WorkerOutcome): void {
    // A plain reason: abort() without one builds a DOMException with a stack, per job.
    job.done.abort(JOB_ENDED);
    disposeFailures += outcome.disposeFailures;
    job.resolve(outcome);
  }

  function onExit(slot: Slot, code: number): void {
    const wasAlive = slot.alive;
    slot.alive = false;
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    for (const job of slot.jobs.values()) {
      const error: SandboxError =
        job.id === slot.overrunJobId
          ? {
              kind: "timeout",
              message: `the run overran its deadline of ${job.job.limits.deadlineMs} ms inside a long built-in call; its sandbox was terminated`,
            }
          : slot.overrunJobId !== undefined
            ? {
                kind: "internal",
                message: "the sandbox worker was replaced because another run overran its deadline",
              }
            : {
                kind: "internal",
                message: `the sandbox worker exited unexpectedly (code ${code}${slot.lastError ? `: ${slot.lastError}` : ""})`,
              };
      settle(job, {
        ok: false,
        resultJson: null,
        error,
        logs: [],
        logsDropped: 0,
        countedMs: 0,
        disposeFailures: 0,
      });
    }
    slot.jobs.clear();
    if (wasAlive || slot.overrunJobId !== undefined) workersReplaced += 1;
    if (!slot.isReady && wasAlive) {
      // A worker that dies before it is ready will not do better next time: stop the loop.
      startFailures += 1;
      if (startFailures >= MAX_START_FAILURES) {
        const reason = `sandbox workers fail to start: ${slot.lastError ?? `exit code ${code}`}`;
        for (const job of queue.splice(0)) {
          settle(job, {
            ok: false,
            resultJson: null,
            error: { kind: "internal", message: reason },
            logs: [],
            logsDropped: 0,
            countedMs: 0,
            disposeFailures: 0,
          });
        }
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
        }
      }
    },
    Math.max(20, Math.min(100, graceMs / 2)),
  );
  watchdog.unref();

  function pickSlot(): Slot | undefined {
    let best: Slot | undefined;
    for (const slot of slots) {
      if (!slot.alive || slot.jobs.size >= maxJobsPerWorker) continue;
      if (!best || slot.jobs.size < best.jobs.size) best = slot;
    }
    if (slots.length < workerCount && (!best || best.jobs.size > 0)) return spawn();
    return best;
  }

  function drain(): void {
    while (queue.length > 0 && !closed) {
      const slot = pickSlot();
      if (!slot) return;
      const job = queue.shift();
      if (!job) return;
      job.slot = slot;
      slot.jobs.set(job.id, job);
      slot.worker.ref();
      jobsStarted += 1;
      send(slot, { t: "start", id: job.id, job: job.job });
    }
  }

  function submit(
    job: Job,
    onCall: PendingJob["onCall"],
    signal: AbortSignal | undefined,
  ): Promise<SandboxRunResult> {
    if (closed) return Promise.reject(new Error("sandbox pool is closed"));
    const startedAt = Date.now();
    return new Promise<SandboxRunResult>((resolve) => {
      const pending: PendingJob = {
        id: ++nextJobId,
        job,
        startedAt,
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
      queue.push(pending);
      drain();
    });
  }

  function cancel(job: PendingJob, reason: string): void {
    if (job.done.signal.aborted) return;
    const queued = queue.indexOf(job);
    if (queued >= 0) queue.splice(queued, 1);
    if (job.slot?.jobs.get(job.id) === job) {
      job.slot.jobs.delete(job.id);
      if (job.slot.jobs.size === 0) job.slot.worker.unref();
      send(job.slot, { t: "cancel", id: job.id, reason });
    }
    settle(job, {
      ok: false,
      resultJson: null,
      // Closing the pool is the server's doing; anything else is the surface stopping its run.
      error: {
        kind: reason === "sandbox pool closed" ? "internal" : "cancelled",
        message: `cancelled: ${reason}`,
      },
      logs: [],
      logsDropped: 0,
      countedMs: 0,
      disposeFailures: 0,
    });
    drain();
  }

  async function runAction(request: RunActionRequest): Promise<SandboxRunResult> {
    const limits = resolveLimits(request.limits, baseLimits);
    const inputJson = request.input === undefined ? "null" : JSON.stringify(request.input);
    const job: Job = { kind: "action", code: request.code, limits, inputJson, modules: request.modules };
    return submit(job, request.onCall, request.signal);
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
    });
    const masked = [...Object.values(request.secrets ?? {}), ...(request.redact ?? [])];
    const job: Job = {
      kind: "binding",
      code: request.code,
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
    const outcome = await submit(job, onCall, request.signal);
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
      while (slots.length < workerCount) spawn();
      await Promise.all(slots.map((s) => s.ready));
    },
    stats() {
      let runningJobs = 0;
      for (const slot of slots) runningJobs += slot.jobs.size;
      return {
        workers: slots.length,
        runningJobs,
        queuedJobs: queue.length,
        workersReplaced,
        jobsStarted,
        disposeFailures,
      };
    },
    async close() {
      closed = true;
      clearInterval(watchdog);
      for (const job of [...queue]) cancel(job, "sandbox pool closed");
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
