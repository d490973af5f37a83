/**
 * Sandbox worker (runs in a worker_thread, started by pool.ts). Each job gets a fresh QuickJS
 * runtime and context in a WASM instance it shares with a few other runs of the same key (each
 * run's memory cap is charged on the instance's growth), host functions for console output and
 * capability calls, and a tiny bridge module.
 * Host calls are async: they go to the main thread as messages and come back as JSON text that
 * settles a guest promise, after which pending jobs are pumped.
 *
 * Deadline: counted in this worker, excluding time during which the main thread has said the
 * clock is suspended (a human approval is pending) and no guest code runs. Every synchronous pump
 * publishes its absolute deadline in a shared buffer; the pool's watchdog terminates this worker
 * when a pump overruns it (long built-in calls are interrupted only once by QuickJS).
 */
import { parentPort, workerData } from "node:worker_threads";
import type {
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  QuickJSRuntime,
} from "quickjs-emscripten-core";
import { GuestNondetSource } from "./guest-nondet";
import {
  BRIDGE_SOURCES,
  DRIVER_SOURCES,
  FACTORY_EXPORT,
  facadeSource,
  GUEST_GLOBALS,
  HELPER_INDEX,
  HELPERS_SOURCE,
  MODULE_NAMES,
  SPARE_DRIVER_SOURCES,
} from "./guest-sources";
import {
  classifyGuestError,
  guestError,
  guestParse,
  guestString,
  type Helpers,
  stringLength,
} from "./guest-values";
import type {
  FromWorker,
  FromWorkerPost,
  Job,
  LogEntry,
  SandboxError,
  ToWorker,
  WorkerInit,
  WorkerOutcome,
} from "./protocol";
import { WATCHDOG_ACTION_SLOT } from "./protocol";
import {
  type CappedQuickJS,
  type GrowthGate,
  loadCappedQuickJS,
  QUICKJS_INITIAL_MEMORY,
  QUICKJS_MAX_MEMORY,
} from "./quickjs-module";
import { GLOBALS_CHECK, globalsUnchanged } from "./warm-globals";
import { createReclaimer } from "./worker-reclaim";

const port = parentPort;
if (!port) throw new Error("worker-main.ts must run in a worker thread");
const init = workerData as WorkerInit;
/** A dropped instance's memory goes back this long after the drop (one GC for a burst). */
const RECLAIM_AFTER_MS = 1_000;
const watchdogDeadline = new Float64Array(init.watchdog, 0, 1);
const watchdogAction = new Int32Array(init.watchdog);

const MAX_MESSAGE_CHARS = 4000;
const MAX_STACK_CHARS = 8000;

/**
 * Messages to the pool leave together at the end of the worker's turn: a binding's "done" and the
 * "done" of the action it served reach the main thread as one message, one wake of its event loop
 * instead of two. A guest that keeps computing after it posted something flushes the outbox from
 * its interrupt handler (see newRuntime), so no message waits on guest code.
 */
let outbox: FromWorker[] = [];

function post(message: FromWorker): void {
  outbox.push(message);
  if (outbox.length === 1) setImmediate(flushOutbox);
}

function flushOutbox(): void {
  const messages = outbox;
  const [first] = messages;
  if (!first) return;
  outbox = [];
  const sent: FromWorkerPost = messages.length === 1 ? first : { t: "batch", messages };
  port?.postMessage(sent);
}

// ---------------------------------------------------------------------------------------------
// Shared modules: a QuickJS WASM instance holds the runtimes of up to `runtimesPerModule` runs of
// one trust domain, kept warm once empty. Actions share with actions (the pool gives a worker to
// one key at a time, and hands it on only once it holds no run); a binding's runtime shares only
// with runtimes of the same code and env, since its warm context outlives its call. A parked run
// then costs its runtime and context, not a whole instance.
//
// Each run's cap is enforced on the instance's growth: a growth while the run computes is charged
// to it, and refused once the run has grown the instance by its limit minus the instance's initial
// memory, so a run alone in an instance gets exactly its limit. A run may also reuse memory that
// its siblings freed; the instance never grows by more than the budgets of the runs it held.

interface SharedModule {
  quickjs: CappedQuickJS;
  /** Who may share it: actions of one memory limit, or one binding's code, env and limits. */
  shareKey: string;
  /** The maximum it was made with (capOf), which an empty instance must match to change hands. */
  cap: number;
  /** Runs and warm contexts holding a runtime in it. */
  users: number;
  /** Takes no new runtime: a run in it ended abnormally. */
  closed: boolean;
  /** A host-level failure (WASM trap, failed disposal): every runtime in it is lost. */
  broken: boolean;
  /** When its last runtime went (it is idle while `users` is 0). */
  idleSince: number;
}

const modules = new Set<SharedModule>();
/**
 * Collects once quiet after a burst, as the serving process's main thread does (idle-gc.ts): after
 * 10 s. A 5 s window fired in each 6 s pause of the served bench's interleaved cells, and the
 * worker's heap grew back in the next one: npm start 0.88-0.91× the bench server without it, at
 * 8 and 32 clients (one run).
 */
const reclaimer = createReclaimer(RECLAIM_AFTER_MS, { everyMs: 2_500, idleBelow: 0.05, quietChecks: 4 });
/** The run whose guest or setup is on the thread now: instance growth is charged to it. */
let computing: Running | undefined;

function growthGate(): GrowthGate {
  return {
    allow: (bytes) => {
      const r = computing;
      return r === undefined || r.grownBytes + bytes <= growthBudget(r);
    },
    grew: (bytes) => {
      if (computing) computing.grownBytes += bytes;
    },
  };
}

function growthBudget(r: Running): number {
  return Math.max(0, r.job.limits.memoryBytes - QUICKJS_INITIAL_MEMORY);
}

/** An instance's maximum: its runs' budgets together, as a backstop to the per-run charge. */
function capOf(job: Job): number {
  return Math.min(QUICKJS_MAX_MEMORY, job.limits.memoryBytes * init.runtimesPerModule);
}

function takesRuntimes(m: SharedModule): boolean {
  return !m.closed && !m.broken && m.quickjs.memory.buffer.byteLength <= init.retireAboveBytes;
}

/** `warmKey`: a binding's (warmKeyOf), which start() has already computed. */
async function leaseModule(job: Job, warmKey: string | undefined): Promise<SharedModule> {
  const shareKey = warmKey === undefined ? `action:${job.limits.memoryBytes}` : `binding:${warmKey}`;
  // Fill the fullest instance with room first, so instances empty out and can go; an empty one
  // (no runtime left in it) may serve anyone with the same limit.
  let best: SharedModule | undefined;
  for (const m of modules) {
    if (m.users >= init.runtimesPerModule || !takesRuntimes(m)) continue;
    if (m.shareKey !== shareKey && (m.users > 0 || m.cap !== capOf(job))) continue;
    if (!best || m.users > best.users) best = m;
  }
  if (best) best.shareKey = shareKey;
  else {
    best = {
      quickjs: await loadCappedQuickJS(capOf(job), growthGate()),
      shareKey,
      cap: capOf(job),
      users: 0,
      closed: false,
      broken: false,
      idleSince: 0,
    };
    modules.add(best);
  }
  best.users += 1;
  return best;
}

function releaseModule(m: SharedModule, healthy: boolean): void {
  m.users -= 1;
  if (!healthy) m.closed = true;
  if (m.users > 0) return;
  let idle = 0;
  for (const other of modules) if (other !== m && other.users === 0) idle += 1;
  // An instance that ended abnormally, or grew, is dropped; a GC frees its memory.
  if (!takesRuntimes(m) || idle >= init.warmModules) {
    modules.delete(m);
    reclaimer.dropped();
    return;
  }
  m.idleSince = Date.now();
  sweepIdleModulesLater();
}

/**
 * Idle instances go once unused for `init.idleModuleMs`, but for one kept warm (unless one is in
 * use): a burst of runs needs several at once (16 runtimes to an instance), and each keeps the
 * memory it grew to while it is kept.
 */
let idleSweep: ReturnType<typeof setTimeout> | undefined;

function sweepIdleModulesLater(): void {
  if (idleSweep) return;
  idleSweep = setTimeout(() => {
    idleSweep = undefined;
    const idle = [...modules].filter((m) => m.users === 0).sort((a, b) => b.idleSince - a.idleSince);
    const due = Date.now() - init.idleModuleMs;
    // One instance stays warm: one in use (a run, a warm context, the spare), or the most recent.
    const inUse = modules.size > idle.length;
    for (const m of inUse ? idle : idle.slice(1)) {
      if (m.idleSince > due) continue;
      modules.delete(m);
      reclaimer.dropped();
    }
    const left = [...modules].filter((m) => m.users === 0).length;
    if (left > (inUse ? 0 : 1)) sweepIdleModulesLater();
  }, init.idleModuleMs);
  idleSweep.unref?.();
}

/** Every runtime in a broken instance is lost: its other runs fail, its warm contexts go. */
function breakModule(m: SharedModule, cause: Running, error: SandboxError): void {
  if (m.broken) return;
  m.broken = true;
  modules.delete(m);
  reclaimer.dropped();
  if (spare?.module === m) spare = undefined;
  for (const [key, list] of warmContexts) {
    const kept = list.filter((w) => w.module !== m);
    warmCount -= list.length - kept.length;
    if (kept.length > 0) warmContexts.set(key, kept);
    else warmContexts.delete(key);
  }
  for (const other of [...running.values()]) {
    if (other === cause || other.module !== m) continue;
    finish(other, {
      kind: "internal",
      message: `the sandbox was lost because another run of the same key crashed the instance it shared (${error.message})`,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Running jobs

interface Running {
  id: number;
  job: Job;
  /** The context's pointer to the run it serves: host functions read it, so a warm context can serve the next run. */
  host?: HostRef;
  /** A binding's module namespace, kept when its context goes back warm. */
  ns?: QuickJSHandle;
  /** A binding context's check that globals are as they were before its first call (GLOBALS_CHECK). */
  globalsCheck?: QuickJSHandle;
  /**
   * A binding call that ran on fresh module state. Its context goes back warm only if the call
   * also left the globals as it found them, checked once its result has gone out (checkGlobals).
   */
  fresh?: boolean;
  /** Served by a warm context. */
  wasWarm?: boolean;
  /** An action started in the spare context. */
  wasSpare?: boolean;
  /** The warm context this run was given (its key), if any. */
  warmKey?: string;
  module?: SharedModule;
  /** Bytes the instance grew while this run computed: charged against its memory limit. */
  grownBytes: number;
  rt?: QuickJSRuntime;
  ctx?: QuickJSContext;
  helpers?: Helpers;
  /** The driver's promise of the guest module namespace, then the promise of the entry's result. */
  loading?: QuickJSHandle;
  running?: QuickJSHandle;
  startedAt: number;
  suspendedTotal: number;
  suspendDepth: number;
  suspendedSince: number;
  pumping: boolean;
  interruptAt: number;
  interrupted: boolean;
  timer?: ReturnType<typeof setTimeout>;
  pending: Map<number, QuickJSDeferredPromise>;
  nextCallId: number;
  calls: number;
  logs: LogEntry[];
  logChars: number;
  logsDropped: number;
  /** A binding run beside the action that called it: the guest call its result settles. */
  deliver?: { id: number; callId: number };
  /** An action's clock and random numbers (replayable, guest-nondet.ts). */
  nondet?: GuestNondetSource;
  /** Set once the guest's entry settled: its JSON result, or its failure. */
  outcome?: { json: string | null } | { error: SandboxError };
  hostFailure?: SandboxError;
  finished: boolean;
}

const running = new Map<number, Running>();

// ---------------------------------------------------------------------------------------------
// Warm binding contexts: a toolset binding's module, once evaluated, serves later calls of the
// same code, environment and limits in this worker, and no other (its key is its trust domain, in
// its own instance; the worker may be the toolset's lane or that of an action that called it).
// Each call still starts on fresh state: the module is a factory (binding-factory.ts) that each
// call runs again, so its module-level variables start over, and a context goes back only if its
// call ended cleanly and left `globalThis` and the built-ins as it found them (GLOBALS_CHECK, warm-globals.ts).

interface HostRef {
  current: Running;
}

interface WarmContext {
  module: SharedModule;
  rt: QuickJSRuntime;
  ctx: QuickJSContext;
  helpers: Helpers;
  ns: QuickJSHandle;
  globalsCheck: QuickJSHandle;
  host: HostRef;
}

const MAX_WARM_CONTEXTS = 4;
const warmContexts = new Map<string, WarmContext[]>();
let warmCount = 0;

function warmKeyOf(job: Job): string | undefined {
  if (job.kind !== "binding") return undefined;
  const { limits } = job;
  // By id when the pool gave one: a toolset's code is tens of KiB, costly to escape and hash per call.
  return JSON.stringify([job.codeId ?? job.code, job.envJson, limits]);
}

/** Binding code the pool sent with an id (it sends each at most once, and a bounded number). */
const codes = new Map<number, string>();

function disposeWarm(w: WarmContext): void {
  let healthy = true;
  for (const h of [w.ns, w.globalsCheck, ...Object.values(w.helpers), w.ctx, w.rt]) {
    try {
      h.dispose();
    } catch {
      healthy = false;
    }
  }
  // No run of it is on the thread: nothing else in the instance is lost, it only takes no more.
  releaseModule(w.module, healthy);
}

function takeWarm(key: string): WarmContext | undefined {
  const list = warmContexts.get(key);
  const w = list?.pop();
  if (!w) return undefined;
  warmCount -= 1;
  if (list && list.length === 0) warmContexts.delete(key);
  return w;
}

function keepWarm(key: string, w: WarmContext): void {
  if (warmCount >= MAX_WARM_CONTEXTS) {
    // Drop the oldest entry of the oldest key.
    const [oldestKey, list] = warmContexts.entries().next().value as [string, WarmContext[]];
    const oldest = list.shift();
    warmCount -= 1;
    if (list.length === 0) warmContexts.delete(oldestKey);
    if (oldest) disposeWarm(oldest);
  }
  const list = warmContexts.get(key) ?? [];
  list.push(w);
  warmContexts.delete(key);
  warmContexts.set(key, list);
  warmCount += 1;
}

function countedMs(r: Running, now: number): number {
  const open = r.suspendDepth > 0 && !r.pumping ? now - r.suspendedSince : 0;
  return now - r.startedAt - r.suspendedTotal - open;
}

function deadlineAt(r: Running): number {
  // The deadline runs from submission: time spent queued for a sandbox counts.
  return r.startedAt + r.job.limits.deadlineMs - (r.job.queuedMs ?? 0) + r.suspendedTotal;
}

function armTimer(r: Running): void {
  if (r.timer) clearTimeout(r.timer);
  r.timer = undefined;
  if (r.finished || r.suspendDepth > 0) return;
  const wait = Math.max(0, deadlineAt(r) - Date.now());
  r.timer = setTimeout(() => onDeadline(r), wait + 1);
}

function onDeadline(r: Running): void {
  r.timer = undefined;
  if (r.finished || r.suspendDepth > 0) return;
  if (Date.now() < deadlineAt(r)) {
    armTimer(r);
    return;
  }
  finish(r, { kind: "timeout", message: timeoutMessage(r) });
}

function timeoutMessage(r: Running): string {
  const what = r.job.kind === "action" ? "action" : "toolset binding";
  // A wait worth naming: a few ms between submission and a free worker is not news.
  const queuedMs = r.job.queuedMs ?? 0;
  const queued = queuedMs >= 50 ? `, ${queuedMs} ms of it waiting in the queue for a sandbox` : "";
  return `the ${what} ran longer than its deadline of ${r.job.limits.deadlineMs} ms${queued} (time spent waiting for approvals is not counted)`;
}

function outOfMemoryMessage(r: Running): string {
  return `out of memory: the sandbox is limited to ${Math.round(r.job.limits.memoryBytes / 1048576)} MiB`;
}

/** The run spent (nearly) its growth budget, or its instance reached its maximum. */
function memoryNearCap(r: Running): boolean {
  const m = r.module;
  if (!m) return false;
  const slack = 2 * 1024 * 1024;
  return (
    r.grownBytes + slack >= growthBudget(r) ||
    m.quickjs.memory.buffer.byteLength + slack >= m.quickjs.capBytes
  );
}

/** Runs `step`, then guest jobs and the entry's next stage, with the deadline armed. */
function pump(r: Running, step?: (ctx: QuickJSContext) => void): void {
  const { rt, ctx } = r;
  if (r.finished || !rt || !ctx) return;
  const now = Date.now();
  if (r.suspendDepth > 0) r.suspendedTotal += now - r.suspendedSince;
  r.pumping = true;
  r.interruptAt = deadlineAt(r);
  watchdogAction[WATCHDOG_ACTION_SLOT] = r.id;
  watchdogDeadline[0] = r.interruptAt;
  computing = r;
  try {
    step?.(ctx);
    for (;;) {
      while (!r.interrupted && rt.hasPendingJob()) {
        const res = rt.executePendingJobs(-1);
        if (res.error) {
          // Only uncatchable errors (interrupt, out of memory) surface here.
          if (!r.outcome) r.outcome = { error: describeThrown(r, ctx, res.error) };
          res.error.dispose();
        }
      }
      if (r.interrupted || r.outcome || !advance(r, ctx)) break;
    }
  } catch (error) {
    // A host-level failure: WASM trap, Emscripten abort, or the worker's own stack.
    r.hostFailure = classifyHostFailure(r, error);
  } finally {
    computing = undefined;
    watchdogDeadline[0] = 0;
    r.pumping = false;
    if (r.suspendDepth > 0) r.suspendedSince = Date.now();
  }
  afterPump(r);
}

/** Moves the entry forward when its current promise settled. Returns true when more jobs may run. */
function advance(r: Running, ctx: QuickJSContext): boolean {
  const helpers = r.helpers;
  if (!helpers) return false;
  if (r.loading) {
    const state = ctx.getPromiseState(r.loading);
    if (state.type === "pending") return false;
    r.loading.dispose();
    r.loading = undefined;
    if (state.type === "rejected") {
      r.outcome = { error: describeThrown(r, ctx, state.error) };
      state.error.dispose();
      return false;
    }
    const ns = state.value;
    try {
      r.running = callEntry(r, ctx, helpers, ns);
    } finally {
      // A binding keeps its namespace, so its context can go back warm.
      if (r.warmKey !== undefined) r.ns = ns;
      else ns.dispose();
    }
    return r.running !== undefined;
  }
  if (r.running) {
    const state = ctx.getPromiseState(r.running);
    if (state.type === "pending") return false;
    const own = state.type === "fulfilled" && state.notAPromise === true;
    if (state.type === "rejected") {
      r.outcome = { error: describeThrown(r, ctx, state.error) };
      state.error.dispose();
    } else {
      r.outcome = serializeResult(r, ctx, helpers, state.value);
      if (!own) state.value.dispose();
    }
    r.running.dispose();
    r.running = undefined;
  }
  return false;
}

/** Calls the action's default export with its input, or the binding's export with its arguments. */
function callEntry(
  r: Running,
  ctx: QuickJSContext,
  helpers: Helpers,
  ns: QuickJSHandle,
): QuickJSHandle | undefined {
  const job = r.job;
  const exportName = job.kind === "action" ? "default" : job.exportName;
  let exports = ns;
  if (job.kind === "binding") {
    const made = freshExports(r, ctx, ns);
    if ("error" in made) {
      r.outcome = { error: describeThrown(r, ctx, made.error) };
      made.error.dispose();
      return undefined;
    }
    exports = made.exports;
  }
  const fn = ctx.getProp(exports, exportName);
  if (exports !== ns) exports.dispose();
  const args: QuickJSHandle[] = [];
  try {
    if (ctx.typeof(fn) !== "function") {
      const message =
        job.kind === "action"
          ? "the action must export a default function: export default async function (input) { ... }"
          : `the toolset has no exported function ${exportName}`;
      r.outcome = { error: { kind: "threw", name: "TypeError", message: `TypeError: ${message}` } };
      return undefined;
    }
    const parsed = guestParse(ctx, helpers, job.kind === "action" ? job.inputJson : job.argsJson);
    if (job.kind === "action") args.push(parsed);
    else {
      const length = ctx.getLength(parsed) ?? 0;
      for (let i = 0; i < length; i++) args.push(ctx.getProp(parsed, i));
      parsed.dispose();
    }
    const result = ctx.callFunction(fn, ctx.undefined, ...args);
    if (result.error) {
      r.outcome = { error: describeThrown(r, ctx, result.error) };
      result.error.dispose();
      return undefined;
    }
    return result.value;
  } finally {
    for (const a of args) a.dispose();
    fn.dispose();
  }
}

/**
 * A binding's exports for this call: from a factory module, a fresh run of the toolset's top level
 * (`fresh` is set: the context may serve the next call if the globals stay as they are); from a
 * module as it is, its namespace (the context is not kept).
 */
function freshExports(
  r: Running,
  ctx: QuickJSContext,
  ns: QuickJSHandle,
): { exports: QuickJSHandle } | { error: QuickJSHandle } {
  if (!r.globalsCheck) {
    // Before the toolset's own code first runs in this context: what "as it was" means.
    const check = ctx.evalCode(GLOBALS_CHECK, "toolstore:globals", { type: "global" });
    if (check.error) return { error: check.error };
    r.globalsCheck = check.value;
  }
  const factory = ctx.getProp(ns, FACTORY_EXPORT);
  try {
    if (ctx.typeof(factory) !== "function") {
      r.fresh = false;
      return { exports: ns };
    }
    const made = ctx.callFunction(factory, ctx.undefined);
    if (made.error) return { error: made.error };
    r.fresh = true;
    return { exports: made.value };
  } finally {
    factory.dispose();
  }
}

function serializeResult(
  r: Running,
  ctx: QuickJSContext,
  helpers: Helpers,
  value: QuickJSHandle,
): { json: string | null } | { error: SandboxError } {
  const res = ctx.callFunction(helpers.stringify, ctx.undefined, value);
  if (res.error) {
    const error = describeThrown(r, ctx, res.error);
    res.error.dispose();
    if (error.kind !== "threw" || error.name === "RangeError" || error.name === "InternalError")
      return { error };
    return {
      error: {
        kind: "threw",
        name: "TypeError",
        message: `TypeError: the result is not JSON-serializable: ${error.message}`,
      },
    };
  }
  try {
    if (ctx.typeof(res.value) !== "string") return { json: null };
    const length = stringLength(ctx, res.value);
    if (length > r.job.limits.resultBytes) {
      return {
        error: {
          kind: "threw",
          name: "RangeError",
          message: `RangeError: the result is ${length} characters of JSON, over the limit of ${r.job.limits.resultBytes}; return a summary instead`,
        },
      };
    }
    return { json: ctx.getString(res.value) };
  } finally {
    res.value.dispose();
  }
}

/** Describes a thrown guest value; runs guest getters, so call it inside a pump. */
function describeThrown(r: Running, ctx: QuickJSContext, thrown: QuickJSHandle): SandboxError {
  if (r.interrupted) return { kind: "timeout", message: timeoutMessage(r) };
  const helpers = r.helpers;
  const type = ctx.typeof(thrown);
  if (!helpers || type !== "object") {
    if (type === "object" && memoryNearCap(r))
      return { kind: "out_of_memory", message: outOfMemoryMessage(r) };
    const text = helpers ? guestString(ctx, helpers.describe, thrown, MAX_MESSAGE_CHARS) : undefined;
    // QuickJS throws null when it cannot even allocate the out-of-memory error.
    if (text === "null" && memoryNearCap(r)) return { kind: "out_of_memory", message: outOfMemoryMessage(r) };
    return {
      kind: "threw",
      name: "NonErrorThrown",
      message: `the action threw a non-Error value: ${text ?? type}`,
    };
  }
  const isError = (() => {
    const res = ctx.callFunction(helpers.isError, ctx.undefined, thrown);
    if (res.error) {
      res.error.dispose();
      return false;
    }
    const yes = ctx.dump(res.value) === true;
    res.value.dispose();
    return yes;
  })();
  if (!isError) {
    const text = guestString(ctx, helpers.describe, thrown, MAX_MESSAGE_CHARS);
    if (text === "null" && memoryNearCap(r)) return { kind: "out_of_memory", message: outOfMemoryMessage(r) };
    return {
      kind: "threw",
      name: "NonErrorThrown",
      message: `the action threw a non-Error value: ${text ?? "[unprintable]"}`,
    };
  }
  const name = guestString(ctx, helpers.readString, thrown, "name", 200) ?? "Error";
  const message = guestString(ctx, helpers.readString, thrown, "message", MAX_MESSAGE_CHARS) ?? "";
  const kind = classifyGuestError(name, message);
  if (kind === "out_of_memory") return { kind, name, message: outOfMemoryMessage(r) };
  if (kind === "timeout") return { kind, message: timeoutMessage(r) };
  const out: SandboxError = {
    kind,
    name,
    message: name && name !== "Error" ? `${name}: ${message}` : message,
  };
  const stack = guestString(ctx, helpers.readString, thrown, "stack", MAX_STACK_CHARS);
  if (stack) out.stack = stack;
  return out;
}

function classifyHostFailure(r: Running, error: unknown): SandboxError {
  const message = error instanceof Error ? error.message : String(error);
  if (r.interrupted) return { kind: "timeout", message: timeoutMessage(r) };
  if (/out of memory|Cannot enlarge memory|memory access out of bounds/i.test(message) || memoryNearCap(r)) {
    return { kind: "out_of_memory", message: outOfMemoryMessage(r) };
  }
  if (/Maximum call stack size exceeded|stack overflow/i.test(message)) {
    return { kind: "threw", name: "RangeError", message: "RangeError: Maximum call stack size exceeded" };
  }
  return { kind: "internal", message: `sandbox failure: ${message}` };
}

function afterPump(r: Running): void {
  if (r.finished) return;
  if (r.hostFailure) {
    finish(r, r.hostFailure);
    return;
  }
  if (r.interrupted) {
    finish(r, { kind: "timeout", message: timeoutMessage(r) });
    return;
  }
  const outcome = r.outcome;
  if (outcome) {
    if ("error" in outcome) finish(r, outcome.error);
    else finish(r, undefined, outcome.json);
    return;
  }
  if (r.pending.size > 0 || r.rt?.hasPendingJob()) return;
  // Nothing can ever resume the guest: it awaits a promise that no host call will settle.
  if (memoryNearCap(r)) {
    finish(r, { kind: "out_of_memory", message: outOfMemoryMessage(r) });
    return;
  }
  finish(r, {
    kind: "threw",
    name: "Deadlock",
    message: "the action awaited a promise that can never settle (no capability call is pending)",
  });
}

function finish(r: Running, error?: SandboxError, resultJson: string | null = null): void {
  if (r.finished) return;
  r.finished = true;
  if (r.timer) clearTimeout(r.timer);
  running.delete(r.id);
  // A guest exception leaves the engine consistent; anything at the host level does not.
  const healthy = r.hostFailure === undefined && (error === undefined || error.kind === "threw");
  const m = r.module;
  if (m && r.hostFailure) breakModule(m, r, r.hostFailure);
  if (m?.broken) {
    // Its runtimes are gone with the instance: nothing to dispose, nothing to give back.
    post({ t: "done", id: r.id, outcome: outcomeOf(r, error, resultJson, 0) });
    deliverToCaller(r, error, resultJson);
    return;
  }
  const warm = healthy ? warmContextOf(r) : undefined;
  if (warm && r.warmKey !== undefined) {
    // The result goes first: the check of the globals is not on the caller's path.
    post({ t: "done", id: r.id, outcome: outcomeOf(r, error, resultJson, 0) });
    deliverToCaller(r, error, resultJson);
    flushOutbox();
    const check = checkGlobals(r, warm);
    if (check === "unchanged") {
      keepWarm(r.warmKey, warm);
      return;
    }
    if (check === "changed") laterDisposeFailures += disposeRun(r);
    else if (check === "cut off") {
      // Not disposed, as an unhealthy run below.
      r.pending.clear();
      releaseModule(warm.module, false);
    }
    return;
  }
  if (m && !healthy) {
    // Freeing a runtime that was interrupted mid-job or ran out of memory can trip QuickJS's own
    // assertion (objects left on its GC list), which aborts the whole instance and every run in
    // it. So its runtime stays, unreachable, in an instance that takes no new run and goes (with
    // all of its memory) once its other runs end.
    r.pending.clear();
    releaseModule(m, false);
    post({ t: "done", id: r.id, outcome: outcomeOf(r, error, resultJson, 0) });
    return;
  }
  // The result goes first: disposal is not on the caller's path (its failures go with the next).
  // It goes out now, not at the end of the turn: what the turn sent so far goes with it, and a
  // caller that the result resumed has sent its own messages by now.
  post({ t: "done", id: r.id, outcome: outcomeOf(r, error, resultJson, 0) });
  deliverToCaller(r, error, resultJson);
  flushOutbox();
  laterDisposeFailures += disposeRun(r);
  wantSpare(r.job);
}

/**
 * Disposes a healthy run's handles, context and runtime, and gives its instance back. Returns
 * how many disposals failed: each is tried on its own, so one failure neither hides nor skips
 * the others; the pool counts them (stats().disposeFailures) and a soak asserts none.
 */
function disposeRun(r: Running): number {
  let failures = 0;
  const dispose = (handle: { dispose(): void } | undefined) => {
    try {
      handle?.dispose();
    } catch {
      failures += 1;
    }
  };
  for (const d of r.pending.values()) dispose(d);
  r.pending.clear();
  dispose(r.loading);
  dispose(r.running);
  dispose(r.ns);
  dispose(r.globalsCheck);
  if (r.helpers) for (const h of Object.values(r.helpers)) dispose(h);
  dispose(r.ctx);
  dispose(r.rt);
  const m = r.module;
  // A leaked handle or an earlier abort: the instance, and every runtime in it, is lost.
  if (m && failures > 0) {
    const lost = { kind: "internal" as const, message: "a sandbox runtime could not be disposed" };
    breakModule(m, r, lost);
  } else if (m) releaseModule(m, true);
  return failures;
}

/** Disposal failures of runs whose "done" had gone out already: reported with the next one. */
let laterDisposeFailures = 0;

/**
 * Runs a finished binding's GLOBALS_CHECK in its context, guarded as a guest step (its deadline
 * and the watchdog armed, growth charged to it), although the check runs no guest code: no
 * property it reads can be a getter. "cut off": it was interrupted or left jobs behind; "broken":
 * a trap, which breaks the instance as in pump().
 */
function checkGlobals(r: Running, warm: WarmContext): "unchanged" | "changed" | "cut off" | "broken" {
  r.interruptAt = deadlineAt(r);
  watchdogAction[WATCHDOG_ACTION_SLOT] = r.id;
  watchdogDeadline[0] = r.interruptAt;
  computing = r;
  try {
    const unchanged = globalsUnchanged(warm.ctx, warm.globalsCheck);
    if (r.interrupted || warm.rt.hasPendingJob()) return "cut off";
    return unchanged ? "unchanged" : "changed";
  } catch (error) {
    breakModule(warm.module, r, classifyHostFailure(r, error));
    return "broken";
  } finally {
    computing = undefined;
    watchdogDeadline[0] = 0;
  }
}

/**
 * A binding run beside its caller settles the caller's promise here, as the main thread's reply
 * would (the same JSON, parsed in the guest), after its own "done" went out, so the main thread
 * records the call before the action can end. A failure goes the usual way: the main thread turns
 * it into the guest's error, and its reply settles the call.
 */
function deliverToCaller(r: Running, error: SandboxError | undefined, resultJson: string | null): void {
  if (!r.deliver || error !== undefined) return;
  onReply(r.deliver.id, r.deliver.callId, true, resultJson ?? "null");
}

/** A binding's context that ended cleanly and may serve the next call, or undefined. */
function warmContextOf(r: Running): WarmContext | undefined {
  const { module, rt, ctx, helpers, ns, globalsCheck, host } = r;
  if (r.warmKey === undefined || !module || !rt || !ctx || !helpers || !ns || !globalsCheck || !host)
    return undefined;
  if (!r.fresh) return undefined;
  if (r.pending.size > 0 || r.loading || r.running || rt.hasPendingJob()) return undefined;
  if (!takesRuntimes(module)) return undefined;
  return { module, rt, ctx, helpers, ns, globalsCheck, host };
}

function outcomeOf(
  r: Running,
  error: SandboxError | undefined,
  resultJson: string | null,
  disposeFailures: number,
): WorkerOutcome {
  const outcome: WorkerOutcome = {
    ok: error === undefined,
    resultJson: error === undefined ? resultJson : null,
    logs: r.logs,
    logsDropped: r.logsDropped,
    countedMs: countedMs(r, Date.now()),
    disposeFailures: disposeFailures + laterDisposeFailures,
  };
  laterDisposeFailures = 0;
  if (error) outcome.error = error;
  if (r.wasWarm) outcome.warm = true;
  if (r.wasSpare) outcome.spare = true;
  return outcome;
}

// ---------------------------------------------------------------------------------------------
// Host functions

function logsFull(r: Running): boolean {
  return r.logs.length >= r.job.limits.logEntries || r.logChars >= r.job.limits.logBytes;
}

/** Keeps what fits; `logsDropped` counts entries dropped or cut. */
function addLog(r: Running, level: LogEntry["level"], text: string, cut: boolean): void {
  if (logsFull(r)) {
    r.logsDropped += 1;
    return;
  }
  const room = r.job.limits.logBytes - r.logChars;
  const kept = text.length > room ? text.slice(0, room) : text;
  r.logs.push({ level, text: kept });
  r.logChars += kept.length;
  if (cut || kept.length < text.length) r.logsDropped += 1;
}

/**
 * The context's helpers and host functions. They serve whichever run `host` points to, and read
 * its limits then: a spare context is made before its run is known.
 */
function installHost(ctx: QuickJSContext, host: HostRef, kind: Job["kind"], envJson?: string): Helpers {
  const helpersArray = ctx.unwrapResult(
    ctx.evalCode(HELPERS_SOURCE, "toolstore:helpers", { type: "global" }),
  );
  const helpers = {} as Helpers;
  for (const [key, index] of Object.entries(HELPER_INDEX)) {
    helpers[key as keyof Helpers] = ctx.getProp(helpersArray, index);
  }
  helpersArray.dispose();
  const what = kind === "action" ? "capability calls" : "fetch calls";

  const call = ctx.newFunction("call", (nameH, argsH, argcH) => {
    const r = host.current;
    const { limits } = r.job;
    const name = ctx.typeof(nameH) === "string" ? ctx.getString(nameH) : "";
    const argc = argcH ? ctx.getNumber(argcH) : 1;
    if (argc > 1) throw new TypeError(`${name} takes one plain object argument, got ${argc} arguments`);
    let json = "{}";
    if (argsH && ctx.typeof(argsH) !== "undefined") {
      const res = ctx.callFunction(helpers.stringify, ctx.undefined, argsH);
      if (res.error) return res;
      try {
        const length = ctx.typeof(res.value) === "string" ? stringLength(ctx, res.value) : -1;
        if (length > limits.argsBytes) {
          throw new RangeError(
            `${name}: arguments are ${length} characters of JSON, over the limit of ${limits.argsBytes}`,
          );
        }
        json = length < 0 ? "" : ctx.getString(res.value);
      } finally {
        res.value.dispose();
      }
      if (json[0] !== "{") throw new TypeError(`${name} takes one plain object argument like { key: value }`);
    }
    r.calls += 1;
    if (r.calls > limits.maxCalls) {
      return {
        error: guestError(ctx, helpers, {
          error: "limit_exceeded",
          capability: name,
          message: `limit of ${limits.maxCalls} ${what} per run reached`,
        }),
      };
    }
    const deferred = ctx.newPromise();
    const callId = ++r.nextCallId;
    r.pending.set(callId, deferred);
    const clock = r.nondet?.take();
    post(
      clock
        ? { t: "call", id: r.id, callId, name, json, clock }
        : { t: "call", id: r.id, callId, name, json },
    );
    return deferred.handle.dup();
  });
  ctx.setProp(ctx.global, GUEST_GLOBALS.call, call);
  call.dispose();

  const console = ctx.newObject();
  for (const level of ["log", "info", "warn", "error", "debug", "trace"] as const) {
    const fn = ctx.newFunction(level, (...args) => {
      const r = host.current;
      if (logsFull(r)) {
        r.logsDropped += 1;
        return;
      }
      const room = r.job.limits.logBytes - r.logChars;
      let text = "";
      let cut = false;
      for (const arg of args) {
        const left = room - text.length;
        if (left <= 0) {
          cut = true;
          break;
        }
        let piece: string | undefined;
        if (ctx.typeof(arg) === "string" && stringLength(ctx, arg) <= left) piece = ctx.getString(arg);
        else piece = guestString(ctx, helpers.describe, arg, left);
        text += (text ? " " : "") + (piece ?? "[unprintable]");
      }
      addLog(r, level === "trace" ? "debug" : level, text, cut);
    });
    ctx.setProp(console, level, fn);
    fn.dispose();
  }
  ctx.setProp(ctx.global, "console", console);
  console.dispose();

  if (kind === "action") installNondet(ctx, host);
  if (envJson !== undefined) {
    const env = ctx.newString(envJson);
    ctx.setProp(ctx.global, GUEST_GLOBALS.env, env);
    env.dispose();
  }
  return helpers;
}

/** Date.now and Math.random of an action, served by the run's replayable source. */
function installNondet(ctx: QuickJSContext, host: HostRef): void {
  const source = (r: Running) => {
    r.nondet ??= new GuestNondetSource(r.job.kind === "action" ? r.job.nondet : undefined);
    return r.nondet;
  };
  const now = ctx.newFunction("now", () => ctx.newNumber(source(host.current).now()));
  ctx.setProp(ctx.global, GUEST_GLOBALS.now, now);
  now.dispose();
  const random = ctx.newFunction("random", () => ctx.newNumber(source(host.current).random()));
  ctx.setProp(ctx.global, GUEST_GLOBALS.random, random);
  random.dispose();
}
/** What a library's refused import is renamed to, so the loader can say why it fails. */
const LIBRARY_REFUSED = "toolstore:refused:";

function installModules(r: Running, rt: QuickJSRuntime): void {
  const job = r.job;
  const entry = job.kind === "action" ? MODULE_NAMES.action : MODULE_NAMES.toolset;
  const mounted = job.kind === "action" ? job.modules : {};
  const libraries = (job.kind === "action" && job.libraries) || {};
  const isLibrary = (name: string) =>
    name.startsWith("toolstore/lib/") && Object.hasOwn(libraries, name.slice("toolstore/".length));
  rt.setModuleLoader(
    (name) => {
      if (name === MODULE_NAMES.bridge) return BRIDGE_SOURCES[job.kind];
      if (name === entry) return job.code;
      // A library is its own self-contained source; the normalizer lets it import nothing.
      if (isLibrary(name)) return libraries[name.slice("toolstore/".length)] as string;
      if (name.startsWith(LIBRARY_REFUSED)) {
        return { error: new Error(`import of "${name.slice(LIBRARY_REFUSED.length)}" is not allowed here`) };
      }
      if (name.startsWith("toolstore/")) {
        const moduleName = name.slice("toolstore/".length);
        const exportNames = Object.hasOwn(mounted, moduleName) ? mounted[moduleName] : undefined;
        if (exportNames) return facadeSource(moduleName, exportNames);
      }
      return { error: new Error(`module "${name}" is not available`) };
    },
    (base, requested) => {
      const allowed =
        (base === MODULE_NAMES.driver && (requested === MODULE_NAMES.bridge || requested === entry)) ||
        (base.startsWith("toolstore/") &&
          !base.startsWith("toolstore/lib/") &&
          requested === MODULE_NAMES.bridge) ||
        (base === MODULE_NAMES.action && requested.startsWith("toolstore/"));
      if (allowed) return requested;
      // A static import's normalizer error reaches the guest without its text; the loader's does.
      if (base.startsWith("toolstore/lib/")) return LIBRARY_REFUSED + requested;
      return { error: new Error(`import of "${requested}" is not allowed here`) };
    },
  );
}

/** A run's state before it starts; `id` 0 is a spare context's stand-in. */
function newRunning(id: number, job: Job, deliver?: { id: number; callId: number }): Running {
  return {
    id,
    job,
    ...(deliver ? { deliver } : {}),
    startedAt: Date.now(),
    suspendedTotal: 0,
    suspendDepth: 0,
    suspendedSince: 0,
    pumping: false,
    interruptAt: 0,
    interrupted: false,
    grownBytes: 0,
    pending: new Map(),
    nextCallId: 0,
    calls: 0,
    logs: [],
    logChars: 0,
    logsDropped: 0,
    finished: false,
  };
}

/** A runtime with the run's limits, interrupted once the run `host` serves is past its deadline. */
function newRuntime(m: SharedModule, limits: Job["limits"], host: HostRef): QuickJSRuntime {
  const rt = m.quickjs.module.newRuntime();
  setRuntimeLimits(rt, limits);
  rt.setInterruptHandler(() => {
    if (outbox.length > 0) flushOutbox();
    const current = host.current;
    if (Date.now() > current.interruptAt) {
      current.interrupted = true;
      return true;
    }
    return false;
  });
  return rt;
}

function setRuntimeLimits(rt: QuickJSRuntime, limits: Job["limits"]): void {
  rt.setMemoryLimit(Math.max(limits.memoryBytes - 4 * 1024 * 1024, 8 * 1024 * 1024));
  rt.setMaxStackSize(limits.stackBytes);
}

// ---------------------------------------------------------------------------------------------
// A spare action context: once an action ends, the worker makes the next one's runtime and
// context while it is idle (host functions installed, the bridge loaded, ~0.4 ms), so an action's
// start costs only its own module. No guest code has run in it. It serves the next action whose
// memory limit matches (the instance it lives in is shared by actions of that limit), which sets
// its own limits and module loader when it takes it; a spare that does not match is dropped.

interface SpareContext {
  module: SharedModule;
  rt: QuickJSRuntime;
  ctx: QuickJSContext;
  helpers: Helpers;
  host: HostRef;
}

/** How long a spare's setup may run before its runtime interrupts it. */
const SPARE_SETUP_MS = 5_000;
let spare: SpareContext | undefined;
let spareWanted = false;

function wantSpare(job: Job): void {
  if (job.kind !== "action" || spare || spareWanted) return;
  spareWanted = true;
  setImmediate(() => {
    void makeSpare(job).finally(() => {
      spareWanted = false;
    });
  });
}

async function makeSpare(job: Job): Promise<void> {
  if (spare) return;
  let m: SharedModule;
  try {
    m = await leaseModule(job, undefined);
  } catch {
    return; // no instance to spare now: the next action makes its own
  }
  const stand = newRunning(0, job);
  stand.interruptAt = Date.now() + SPARE_SETUP_MS;
  const host: HostRef = { current: stand };
  const made: { dispose(): void }[] = [];
  try {
    const rt = newRuntime(m, job.limits, host);
    made.unshift(rt);
    rt.setModuleLoader(
      (name) =>
        name === MODULE_NAMES.bridge
          ? BRIDGE_SOURCES.action
          : { error: new Error(`module "${name}" is not available`) },
      (base, requested) =>
        base === MODULE_NAMES.driver && requested === MODULE_NAMES.bridge
          ? requested
          : { error: new Error(`import of "${requested}" is not allowed here`) },
    );
    const ctx = rt.newContext();
    made.unshift(ctx);
    const helpers = installHost(ctx, host, "action");
    made.unshift(...Object.values(helpers));
    const loading = ctx.unwrapResult(
      ctx.evalCode(SPARE_DRIVER_SOURCES.bridge, MODULE_NAMES.driver, { type: "global" }),
    );
    rt.executePendingJobs();
    const state = ctx.getPromiseState(loading);
    loading.dispose();
    if (state.type !== "fulfilled") {
      if (state.type === "rejected") state.error.dispose();
      throw new Error("the bridge did not load");
    }
    state.value.dispose();
    if (m.broken || stand.interrupted) throw new Error("the spare's instance was lost");
    spare = { module: m, rt, ctx, helpers, host };
  } catch {
    // Not used: what was made goes, and its instance takes no new runtime (it may have trapped).
    if (!m.broken) {
      for (const handle of made) {
        try {
          handle.dispose();
        } catch {
          // the instance is closed below
        }
      }
      releaseModule(m, false);
    }
  }
}

/** The spare for `job`, if there is one that fits; one that does not is dropped. */
function takeSpare(job: Job): SpareContext | undefined {
  const s = spare;
  if (!s || job.kind !== "action") return undefined;
  spare = undefined;
  if (s.module.shareKey === `action:${job.limits.memoryBytes}` && takesRuntimes(s.module)) return s;
  if (!s.module.broken) {
    let healthy = true;
    for (const handle of [...Object.values(s.helpers), s.ctx, s.rt]) {
      try {
        handle.dispose();
      } catch {
        healthy = false;
      }
    }
    releaseModule(s.module, healthy);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Messages

async function start(id: number, job: Job, deliver?: { id: number; callId: number }): Promise<void> {
  const r = newRunning(id, job, deliver);
  running.set(id, r);
  if (job.kind === "binding" && job.codeId !== undefined) {
    // The pool sends a toolset's code to a worker once; later calls name it by id.
    if (job.code) codes.set(job.codeId, job.code);
    else {
      const known = codes.get(job.codeId);
      if (known === undefined) {
        finish(r, { kind: "internal", message: `the worker has no code for id ${job.codeId}` });
        return;
      }
      job.code = known;
    }
  }
  const ready = takeSpare(job);
  if (ready) {
    Object.assign(r, {
      module: ready.module,
      rt: ready.rt,
      ctx: ready.ctx,
      helpers: ready.helpers,
      wasSpare: true,
    });
    r.host = ready.host;
    ready.host.current = r;
    setRuntimeLimits(ready.rt, job.limits);
    installModules(r, ready.rt);
    r.startedAt = Date.now();
    r.interruptAt = deadlineAt(r);
    armTimer(r);
    pump(r, (ctx) => evalDriver(r, ctx, SPARE_DRIVER_SOURCES.action));
    return;
  }
  const warmKey = warmKeyOf(job);
  const warm = warmKey === undefined ? undefined : takeWarm(warmKey);
  if (warm && warmKey !== undefined) {
    // The toolset's module is loaded: call the export in the context it was evaluated in.
    Object.assign(r, {
      module: warm.module,
      rt: warm.rt,
      ctx: warm.ctx,
      helpers: warm.helpers,
      globalsCheck: warm.globalsCheck,
      warmKey,
      wasWarm: true,
    });
    r.host = warm.host;
    warm.host.current = r;
    r.startedAt = Date.now();
    r.interruptAt = deadlineAt(r);
    const ns = warm.ns;
    r.ns = ns;
    armTimer(r);
    pump(r, (ctx) => {
      r.running = callEntry(r, ctx, warm.helpers, ns);
    });
    return;
  }
  let m: SharedModule;
  try {
    m = await leaseModule(job, warmKey);
  } catch (error) {
    finish(r, { kind: "internal", message: `could not start a sandbox: ${String(error)}` });
    return;
  }
  if (r.finished) {
    // Cancelled while its instance was being made.
    releaseModule(m, true);
    return;
  }
  r.module = m;
  // The deadline starts when the guest can run, not while a module was being loaded.
  r.startedAt = Date.now();
  r.interruptAt = deadlineAt(r);
  computing = r;
  try {
    const host: HostRef = { current: r };
    const rt = newRuntime(m, job.limits, host);
    r.rt = rt;
    installModules(r, rt);
    const ctx = rt.newContext();
    r.ctx = ctx;
    r.host = host;
    r.helpers = installHost(ctx, host, job.kind, job.kind === "binding" ? job.envJson : undefined);
    if (warmKey !== undefined) r.warmKey = warmKey;
    computing = undefined;
  } catch (error) {
    computing = undefined;
    // A trap leaves the shared instance in an unknown state; a refusal (no memory) does not.
    if (error instanceof WebAssembly.RuntimeError && !r.interrupted) {
      r.hostFailure = { kind: "internal", message: `could not start a sandbox: ${error.message}` };
    }
    // On a loaded machine a short deadline can pass while the runtime is being set up.
    finish(
      r,
      r.interrupted
        ? { kind: "timeout", message: timeoutMessage(r) }
        : { kind: "internal", message: `could not start a sandbox: ${String(error)}` },
    );
    return;
  }
  armTimer(r);
  pump(r, (ctx) => evalDriver(r, ctx, DRIVER_SOURCES[job.kind]));
}

/** Evaluates the global script that loads the guest's module; its promise is `r.loading`. */
function evalDriver(r: Running, ctx: QuickJSContext, source: string): void {
  const res = ctx.evalCode(source, MODULE_NAMES.driver, { type: "global" });
  if (res.error) {
    r.outcome = { error: describeThrown(r, ctx, res.error) };
    res.error.dispose();
  } else {
    r.loading = res.value;
  }
}

function onReply(id: number, callId: number, ok: boolean, json: string): void {
  const r = running.get(id);
  const deferred = r?.pending.get(callId);
  if (!r || !deferred) return;
  r.pending.delete(callId);
  pump(r, (ctx) => {
    const helpers = r.helpers;
    if (!helpers) return;
    if (ok && json === "") deferred.resolve();
    else if (ok) {
      const text = ctx.newString(json);
      const value = ctx.callFunction(helpers.parse, ctx.undefined, text);
      text.dispose();
      if (value.error) {
        deferred.reject(value.error);
        value.error.dispose();
      } else {
        deferred.resolve(value.value);
        value.value.dispose();
      }
    } else {
      const error = guestError(ctx, helpers, JSON.parse(json) as Record<string, unknown>);
      deferred.reject(error);
      error.dispose();
    }
    deferred.dispose();
  });
}

function onClock(id: number, suspended: boolean): void {
  const r = running.get(id);
  if (!r) return;
  const now = Date.now();
  if (suspended) {
    r.suspendDepth += 1;
    if (r.suspendDepth === 1) r.suspendedSince = now;
  } else if (r.suspendDepth > 0) {
    r.suspendDepth -= 1;
    if (r.suspendDepth === 0) r.suspendedTotal += now - r.suspendedSince;
  }
  armTimer(r);
}

port.on("message", (message: ToWorker) => {
  switch (message.t) {
    case "start":
      void start(message.id, message.job, message.deliver);
      break;
    case "reply":
      onReply(message.id, message.callId, message.ok, message.json);
      break;
    case "clock":
      onClock(message.id, message.suspended);
      break;
    case "cancel": {
      const r = running.get(message.id);
      if (r) finish(r, { kind: "cancelled", message: `cancelled: ${message.reason}` });
      break;
    }
  }
});

post({ t: "ready" });
