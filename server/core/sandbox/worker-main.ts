/**
 * Sandbox worker (runs in a worker_thread, started by pool.ts). Each job gets a QuickJS WASM
 * module leased exclusively for its lifetime (memory caps are per module), a fresh runtime and
 * context, and the guest bridge. Host calls are async: they go to the main thread as messages and
 * come back as JSON text that resolves a guest promise, after which pending jobs are pumped.
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
import {
  BRIDGE_SOURCES,
  type BridgeConfig,
  DRIVER_SOURCES,
  facadeSource,
  GUEST_GLOBALS,
  MODULE_NAMES,
} from "./guest-sources";
import type {
  FromWorker,
  Job,
  LogEntry,
  SandboxError,
  SandboxErrorKind,
  ToWorker,
  WorkerInit,
  WorkerOutcome,
} from "./protocol";
import { WATCHDOG_ACTION_SLOT } from "./protocol";
import { type CappedQuickJS, loadCappedQuickJS } from "./quickjs-module";

const port = parentPort;
if (!port) throw new Error("worker-main.ts must run in a worker thread");
const init = workerData as WorkerInit;
const watchdogDeadline = new Float64Array(init.watchdog, 0, 1);
const watchdogAction = new Int32Array(init.watchdog);

function post(message: FromWorker): void {
  port?.postMessage(message);
}

// ---------------------------------------------------------------------------------------------
// Module leases: one QuickJS WASM instance per running job, kept warm after a clean end.

const idleModules = new Map<number, CappedQuickJS[]>();

async function leaseModule(capBytes: number): Promise<CappedQuickJS> {
  const idle = idleModules.get(capBytes);
  const reused = idle?.pop();
  if (reused) return reused;
  return loadCappedQuickJS(capBytes);
}

function releaseModule(lease: CappedQuickJS, healthy: boolean): void {
  // A module that ended abnormally, or whose memory grew, is dropped; the GC frees its memory.
  if (!healthy || lease.memory.buffer.byteLength > init.retireAboveBytes) return;
  const idle = idleModules.get(lease.capBytes) ?? [];
  if (idle.length >= init.warmModules) return;
  idle.push(lease);
  idleModules.set(lease.capBytes, idle);
}

// ---------------------------------------------------------------------------------------------
// Running jobs

interface Running {
  id: number;
  job: Job;
  lease?: CappedQuickJS;
  rt?: QuickJSRuntime;
  ctx?: QuickJSContext;
  driver?: QuickJSHandle;
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
  result?: { ok: true; json: string | null } | { ok: false; errorJson: string };
  /** An uncatchable error (interrupt, out of memory) that surfaced from the engine. */
  engineError?: { name: string; message: string };
  hostFailure?: SandboxError;
  finished: boolean;
  cancelled?: string;
}

const running = new Map<number, Running>();

function countedMs(r: Running, now: number): number {
  const open = r.suspendDepth > 0 && !r.pumping ? now - r.suspendedSince : 0;
  return now - r.startedAt - r.suspendedTotal - open;
}

function deadlineAt(r: Running): number {
  return r.startedAt + r.job.limits.deadlineMs + r.suspendedTotal;
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
  return `the ${what} ran longer than its deadline of ${r.job.limits.deadlineMs} ms (time spent waiting for approvals is not counted)`;
}

function beginPump(r: Running): void {
  const now = Date.now();
  if (r.suspendDepth > 0) r.suspendedTotal += now - r.suspendedSince;
  r.pumping = true;
  r.interruptAt = deadlineAt(r);
  watchdogAction[WATCHDOG_ACTION_SLOT] = r.id;
  watchdogDeadline[0] = r.interruptAt;
}

function endPump(r: Running): void {
  watchdogDeadline[0] = 0;
  r.pumping = false;
  if (r.suspendDepth > 0) r.suspendedSince = Date.now();
}

/** Runs `step` and then every pending guest job, with the deadline armed. */
function pump(r: Running, step?: (ctx: QuickJSContext) => void): void {
  const { rt, ctx } = r;
  if (r.finished || !rt || !ctx) return;
  beginPump(r);
  try {
    step?.(ctx);
    while (!r.interrupted && rt.hasPendingJob()) {
      const res = rt.executePendingJobs(-1);
      if (res.error) {
        noteEngineError(r, ctx, res.error);
        res.error.dispose();
      }
    }
  } catch (error) {
    // A host-level failure: WASM trap, Emscripten abort, or the worker's own stack.
    r.hostFailure = classifyHostFailure(r, error);
  } finally {
    endPump(r);
  }
  afterPump(r);
}

function readStringProp(ctx: QuickJSContext, h: QuickJSHandle, key: string): string | undefined {
  try {
    const prop = ctx.getProp(h, key);
    try {
      return ctx.typeof(prop) === "string" ? ctx.getString(prop) : undefined;
    } finally {
      prop.dispose();
    }
  } catch {
    return undefined;
  }
}

function noteEngineError(r: Running, ctx: QuickJSContext, h: QuickJSHandle): void {
  if (r.engineError) return;
  const type = ctx.typeof(h);
  if (type === "object") {
    r.engineError = {
      name: readStringProp(ctx, h, "name") ?? "Error",
      message: readStringProp(ctx, h, "message") ?? "",
    };
  } else {
    r.engineError = { name: "Error", message: type === "string" ? ctx.getString(h) : `uncaught ${type}` };
  }
}

function memoryNearCap(r: Running): boolean {
  const lease = r.lease;
  if (!lease) return false;
  return lease.memory.buffer.byteLength + 2 * 1024 * 1024 >= lease.capBytes;
}

function classifyHostFailure(r: Running, error: unknown): SandboxError {
  const message = error instanceof Error ? error.message : String(error);
  if (r.interrupted) return { kind: "timeout", message: timeoutMessage(r) };
  if (/out of memory|Cannot enlarge memory|memory access out of bounds/i.test(message) || memoryNearCap(r)) {
    return { kind: "out_of_memory", message: outOfMemoryMessage(r) };
  }
  if (/Maximum call stack size exceeded|stack overflow/i.test(message)) {
    return { kind: "threw", name: "RangeError", message: "Maximum call stack size exceeded" };
  }
  return { kind: "internal", message: `sandbox failure: ${message}` };
}

function outOfMemoryMessage(r: Running): string {
  return `out of memory: the sandbox is limited to ${Math.round(r.job.limits.memoryBytes / 1048576)} MiB`;
}

function classifyGuestError(name: string, message: string): SandboxErrorKind {
  if (name === "InternalError" && message === "interrupted") return "timeout";
  if (name === "InternalError" && /out of memory/.test(message)) return "out_of_memory";
  return "threw";
}

function afterPump(r: Running): void {
  if (r.finished) return;
  const error = pumpVerdict(r);
  if (error === null) return;
  if (error === undefined) finish(r, undefined, r.result?.ok ? r.result.json : null);
  else finish(r, error);
}

/** null: still running; undefined: finished with a result; otherwise the failure. */
function pumpVerdict(r: Running): SandboxError | undefined | null {
  if (r.hostFailure) return r.hostFailure;
  if (r.interrupted) return { kind: "timeout", message: timeoutMessage(r) };
  if (r.result) return r.result.ok ? undefined : decodeGuestError(r, r.result.errorJson);
  if (r.engineError) {
    const kind = classifyGuestError(r.engineError.name, r.engineError.message);
    if (kind === "out_of_memory") return { kind, message: outOfMemoryMessage(r) };
    if (kind === "timeout") return { kind, message: timeoutMessage(r) };
    return { kind, name: r.engineError.name, message: r.engineError.message };
  }
  if (r.pending.size > 0 || r.rt?.hasPendingJob()) return null;
  // Nothing can ever resume the guest: it awaits a promise that no host call will settle.
  if (memoryNearCap(r)) return { kind: "out_of_memory", message: outOfMemoryMessage(r) };
  return {
    kind: "threw",
    name: "Deadlock",
    message: "the action awaited a promise that can never settle (no capability call is pending)",
  };
}

function decodeGuestError(r: Running, json: string): SandboxError {
  try {
    const e = JSON.parse(json) as { name?: string; message?: string; stack?: string };
    const name = String(e.name ?? "Error");
    const message = String(e.message ?? "");
    let kind = classifyGuestError(name, message);
    // QuickJS throws null when it cannot even allocate the out-of-memory error.
    if (name === "NonErrorThrown" && message.endsWith("value: null") && memoryNearCap(r))
      kind = "out_of_memory";
    if (kind === "out_of_memory") return { kind, name, message: outOfMemoryMessage(r) };
    if (kind === "timeout") return { kind, message: timeoutMessage(r) };
    const out: SandboxError = {
      kind,
      name,
      message: name && name !== "Error" ? `${name}: ${message}` : message,
    };
    if (e.stack) out.stack = e.stack;
    return out;
  } catch {
    return { kind: "threw", message: "the action failed with an unreadable error" };
  }
}

function finish(r: Running, error?: SandboxError, resultJson: string | null = null): void {
  if (r.finished) return;
  r.finished = true;
  if (r.timer) clearTimeout(r.timer);
  running.delete(r.id);
  // A guest exception leaves the engine consistent; anything at the host level does not.
  let healthy = r.hostFailure === undefined && (error === undefined || error.kind === "threw");
  try {
    for (const d of r.pending.values()) d.dispose();
    r.pending.clear();
    r.driver?.dispose();
    r.ctx?.dispose();
    r.rt?.dispose();
  } catch {
    // A leaked handle or an earlier abort: the module cannot be trusted again.
    healthy = false;
  }
  if (r.lease) releaseModule(r.lease, healthy);
  const outcome: WorkerOutcome = {
    ok: error === undefined,
    resultJson: error === undefined ? resultJson : null,
    logs: r.logs,
    logsDropped: r.logsDropped,
    countedMs: countedMs(r, Date.now()),
  };
  if (error) outcome.error = error;
  post({ t: "done", id: r.id, outcome });
}

// ---------------------------------------------------------------------------------------------
// Starting a job

function addLog(r: Running, level: LogEntry["level"], text: string): void {
  const { logBytes, logEntries } = r.job.limits;
  if (r.logs.length >= logEntries || r.logChars >= logBytes) {
    r.logsDropped += text.length;
    return;
  }
  const room = logBytes - r.logChars;
  const kept = text.length > room ? text.slice(0, room) : text;
  r.logs.push({ level, text: kept });
  r.logChars += kept.length;
  r.logsDropped += text.length - kept.length;
}

const LOG_LEVELS = new Set(["log", "info", "warn", "error", "debug"]);

function installHost(r: Running, ctx: QuickJSContext): void {
  const job = r.job;
  const config: BridgeConfig = {
    kind: job.kind,
    maxResultChars: job.limits.resultBytes,
    maxArgsChars: job.limits.argsBytes,
    maxLogChars: job.limits.logBytes,
  };
  if (job.kind === "action") {
    config.inputJson = job.inputJson;
  } else {
    config.exportName = job.exportName;
    config.argsJson = job.argsJson;
    config.envJson = job.envJson;
  }

  const host = ctx.newFunction(GUEST_GLOBALS.host, (nameH, jsonH) => {
    const name = ctx.typeof(nameH) === "string" ? ctx.getString(nameH) : "";
    const json = jsonH && ctx.typeof(jsonH) === "string" ? ctx.getString(jsonH) : "{}";
    const deferred = ctx.newPromise();
    r.calls += 1;
    if (r.calls > job.limits.maxCalls) {
      const what = job.kind === "action" ? "capability calls" : "fetch calls";
      const reply = JSON.stringify({
        ok: false,
        error: {
          error: "limit_exceeded",
          capability: name,
          message: `limit of ${job.limits.maxCalls} ${what} per run reached`,
        },
      });
      const s = ctx.newString(reply);
      deferred.resolve(s);
      s.dispose();
      const handle = deferred.handle.dup();
      deferred.dispose();
      return handle;
    }
    const callId = ++r.nextCallId;
    r.pending.set(callId, deferred);
    post({ t: "call", id: r.id, callId, name, json });
    return deferred.handle.dup();
  });
  const log = ctx.newFunction(GUEST_GLOBALS.log, (levelH, textH) => {
    const level = ctx.getString(levelH);
    addLog(r, (LOG_LEVELS.has(level) ? level : "log") as LogEntry["level"], ctx.getString(textH));
  });
  const done = ctx.newFunction(GUEST_GLOBALS.done, (okH, jsonH) => {
    if (r.result) return;
    const ok = ctx.dump(okH) === true;
    const json = jsonH && ctx.typeof(jsonH) === "string" ? ctx.getString(jsonH) : null;
    r.result = ok ? { ok: true, json } : { ok: false, errorJson: json ?? "{}" };
  });
  const configH = ctx.newString(JSON.stringify(config));
  ctx.setProp(ctx.global, GUEST_GLOBALS.host, host);
  ctx.setProp(ctx.global, GUEST_GLOBALS.log, log);
  ctx.setProp(ctx.global, GUEST_GLOBALS.done, done);
  ctx.setProp(ctx.global, GUEST_GLOBALS.config, configH);
  host.dispose();
  log.dispose();
  done.dispose();
  configH.dispose();
}

function installModules(r: Running, rt: QuickJSRuntime): void {
  const job = r.job;
  const entry = job.kind === "action" ? MODULE_NAMES.action : MODULE_NAMES.toolset;
  const mounted = job.kind === "action" ? job.modules : {};
  rt.setModuleLoader(
    (name) => {
      if (name === MODULE_NAMES.bridge) return BRIDGE_SOURCES[job.kind];
      if (name === entry) return job.code;
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
        (base.startsWith("toolstore/") && requested === MODULE_NAMES.bridge) ||
        (base === MODULE_NAMES.action && requested.startsWith("toolstore/"));
      if (allowed) return requested;
      return { error: new Error(`import of "${requested}" is not allowed here`) };
    },
  );
}

async function start(id: number, job: Job): Promise<void> {
  const r: Running = {
    id,
    job,
    startedAt: Date.now(),
    suspendedTotal: 0,
    suspendDepth: 0,
    suspendedSince: 0,
    pumping: false,
    interruptAt: 0,
    interrupted: false,
    pending: new Map(),
    nextCallId: 0,
    calls: 0,
    logs: [],
    logChars: 0,
    logsDropped: 0,
    finished: false,
  };
  running.set(id, r);
  try {
    r.lease = await leaseModule(job.limits.memoryBytes);
  } catch (error) {
    finish(r, { kind: "internal", message: `could not start a sandbox: ${String(error)}` });
    return;
  }
  if (r.finished) {
    releaseModule(r.lease, true);
    return;
  }
  // The module load may have taken a moment; the deadline starts when the guest can run.
  r.startedAt = Date.now();
  try {
    const rt = r.lease.module.newRuntime();
    r.rt = rt;
    rt.setMemoryLimit(Math.max(job.limits.memoryBytes - 4 * 1024 * 1024, 8 * 1024 * 1024));
    rt.setMaxStackSize(job.limits.stackBytes);
    rt.setInterruptHandler(() => {
      if (Date.now() > r.interruptAt) {
        r.interrupted = true;
        return true;
      }
      return false;
    });
    installModules(r, rt);
    const ctx = rt.newContext();
    r.ctx = ctx;
    installHost(r, ctx);
  } catch (error) {
    finish(r, { kind: "internal", message: `could not start a sandbox: ${String(error)}` });
    return;
  }
  armTimer(r);
  const driver = DRIVER_SOURCES[job.kind];
  pump(r, (ctx) => {
    const res = ctx.evalCode(driver, MODULE_NAMES.driver, { type: "module" });
    if (res.error) {
      noteEngineError(r, ctx, res.error);
      res.error.dispose();
    } else {
      r.driver = res.value;
    }
  });
}

function onReply(id: number, callId: number, json: string): void {
  const r = running.get(id);
  const deferred = r?.pending.get(callId);
  if (!r || !deferred) return;
  r.pending.delete(callId);
  pump(r, (ctx) => {
    const s = ctx.newString(json);
    deferred.resolve(s);
    s.dispose();
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
      void start(message.id, message.job);
      break;
    case "reply":
      onReply(message.id, message.callId, message.json);
      break;
    case "clock":
      onClock(message.id, message.suspended);
      break;
    case "cancel": {
      const r = running.get(message.id);
      if (r) finish(r, { kind: "internal", message: `cancelled: ${message.reason}` });
      break;
    }
  }
});

post({ t: "ready" });
