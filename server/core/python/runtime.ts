/**
 * The `python` BindingRuntime: Pyodide interpreters in worker threads (./worker.mjs), never in the
 * server process. One trust domain per worker: a worker that has run a toolset's code serves only
 * that toolset (`trustDomain` = `<toolset>@<hash>`) until it is retired, so two toolsets never share
 * an interpreter (monkey-patching a module cannot reach another toolset). A blank, locked-down
 * worker is kept warm so the first call of a toolset does not pay Pyodide's start-up.
 *
 * Limits, each a clear error: the toolset's timeout (interrupt through a SharedArrayBuffer first,
 * then terminate the worker: C-level loops and code that catches BaseException ignore interrupts),
 * a hard memory cap (the wasm maximum is patched before load, so a bomb is a MemoryError), a result
 * size limit, and a worker whose memory grew past a threshold is retired after its call.
 *
 * Outbound HTTP from Python (the httpx module) is a synchronous bridge: the worker posts the request
 * and waits on a shared buffer; this side checks the toolset's allowed hosts and uses the shared
 * host egress (createAllowlistFetch), then writes the response into the buffer.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve as resolvePath } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { isAppError } from "../errors";
import type { BindingResult, BindingRuntime, RunBindingRequest } from "../sandbox/binding-runtime";
import { createEgressFetch } from "../sandbox/egress";
import { type HostFetch, type HostFetchRequest, isHostAllowed } from "../sandbox/host-fetch";
import type { LogEntry, SandboxErrorKind } from "../sandbox/protocol";
import type { PythonParseOutput } from "./parse-python";

const MiB = 1024 * 1024;
const WASM_PAGE = 64 * 1024;
const PARSE_IDLE_MS = 30_000;

export interface PythonRuntimeOptions {
  /** Most worker threads at once (each holds an interpreter, ~150 MB RSS). Default 4. */
  maxWorkers?: number;
  /** Blank, locked-down workers kept ready for a toolset's first call. Default 1. */
  spareWorkers?: number;
  /** Hard cap of one interpreter's wasm memory. Default 256 MiB. */
  memoryBytes?: number;
  /** Retire a worker whose wasm memory is above this after a call. Default 160 MiB. */
  recycleAboveBytes?: number;
  /** Characters of a binding's JSON result. Default 1 MiB. */
  resultBytes?: number;
  /** Characters of print() output kept per call. Default 64 KiB. */
  logBytes?: number;
  /** HTTP requests per call. Default 200. */
  maxFetches?: number;
  /** Largest response body a toolset's httpx call may read. Default 4 MiB. */
  maxBodyBytes?: number;
  /** Time between the interrupt and the terminate at a deadline. Default 150 ms. */
  interruptGraceMs?: number;
  /** Worker JS heap limit in MiB (the interpreter is wasm, outside it). Default 128. */
  workerHeapMb?: number;
  /** Deadline of a parse (ast only), once an interpreter is ready. Default 10 s. */
  parseTimeoutMs?: number;
  /**
   * How long a call may wait for an interpreter: a cold start (Pyodide loads in ~3 s on an idle
   * machine, far longer on a loaded one), or every worker busy. The toolset's timeout starts only
   * after this wait, and the caller's deadline is paused during it. Default 60 s.
   */
  startTimeoutMs?: number;
  /**
   * A worker bound to a toolset (or used only to parse) that has been idle this long is retired:
   * an interpreter holds ~150 MB or more, and one left by parsing at start used to stay for the
   * life of the process. Blank spares kept for a first call stay. Default 5 minutes.
   */
  idleRetireMs?: number;
  /** Where toolsets' declared hosts are really sent (host-fetch.ts, TOOLSTORE_EGRESS_ALIASES). */
  hostAliases?: Readonly<Record<string, string>>;
  /**
   * The host egress a call's httpx requests go through; default createAllowlistFetch over the
   * request's allowed hosts. The host allow-list is checked before it is called, either way.
   */
  egress?: (request: RunBindingRequest) => HostFetch;
}

export interface PythonRuntimeStats {
  workers: number;
  busy: number;
  spare: number;
  domains: string[];
  started: number;
  retired: number;
}

/** A skill's `.py` script: `def main(input)`, run with a toolset's lockdown and no network. */
export interface RunScriptRequest {
  /** `<skill>/<path>`, e.g. `report/scripts/summary.py`: names the file in errors. */
  file: string;
  code: string;
  /** JSON value handed to `main`. */
  input: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
  /** As for a binding: the caller's deadline pauses while an interpreter starts. */
  pauseDeadline?: () => () => void;
}

export interface PythonRuntime extends BindingRuntime {
  readonly language: "python";
  /** Run a skill's Python script (`main(input)`) in its own locked-down interpreter. */
  runScript(request: RunScriptRequest): Promise<BindingResult>;
  /** Parse toolset.py with Python's `ast` in a sandboxed worker; nothing of the file runs. */
  parse(source: string): Promise<PythonParseOutput>;
  /** Start the spare workers now and wait until one is ready. */
  warm(): Promise<void>;
  stats(): PythonRuntimeStats;
}

interface CallJob {
  id: number;
  resolve(result: WorkerDone): void;
  fetches: number;
  controller: AbortController;
  egress: HostFetch;
  allowedHosts: string[];
}

interface WorkerDone {
  json: string;
  logs: LogEntry[];
  durationMs: number;
  memoryBytes: number;
}

interface Slot {
  worker: Worker;
  domain: string | null;
  busy: boolean;
  ready: Promise<void>;
  isReady: boolean;
  alive: boolean;
  interrupt: Int8Array;
  bridgeState: Int32Array;
  bridgeData: Uint8Array;
  job?: CallJob;
  memoryBytes: number;
  lastUsed: number;
  exitReason?: string;
}

const PARSE_DOMAIN = "parse:";
/** Workers in a row that may die while starting before the waiting calls are told why. */
const MAX_START_FAILURES = 3;

/** No interpreter could be had for a call: none got ready in time, or none can start. */
class StartFailure extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}
const BRIDGE_BYTES = 12 * MiB;

function here(): string | undefined {
  try {
    return dirname(fileURLToPath(import.meta.url));
  } catch {
    return undefined;
  }
}

function findFile(relative: string): string {
  const dir = here();
  const candidates = [
    ...(dir ? [join(dir, relative)] : []),
    resolvePath(process.cwd(), "server/core/python", relative),
  ];
  const found = candidates.find((p) => existsSync(p));
  if (!found)
    throw new Error(`python runtime file ${relative} not found (looked in ${candidates.join(", ")})`);
  return found;
}

function findPyodideDir(): string {
  try {
    return dirname(createRequire(import.meta.url).resolve("pyodide/package.json"));
  } catch {
    const local = resolvePath(process.cwd(), "node_modules/pyodide");
    if (existsSync(join(local, "pyodide.mjs"))) return local;
    throw new Error("the pyodide package is not installed (npm install)");
  }
}

let bootstrapSource: string | undefined;
function pythonBootstrap(): string {
  if (bootstrapSource) return bootstrapSource;
  const sources = {
    "toolstore.toolset": readFileSync(findFile("py/toolset.py"), "utf8"),
    httpx: readFileSync(findFile("py/httpx.py"), "utf8"),
  };
  bootstrapSource = `_SOURCES = ${JSON.stringify(sources)}\n${readFileSync(findFile("py/bootstrap.py"), "utf8")}`;
  return bootstrapSource;
}

function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join("***");
  return out;
}

export function createPythonRuntime(options: PythonRuntimeOptions = {}): PythonRuntime {
  const maxWorkers = Math.max(1, options.maxWorkers ?? 4);
  const spareTarget = Math.max(0, Math.min(options.spareWorkers ?? 1, maxWorkers));
  const memoryBytes = options.memoryBytes ?? 256 * MiB;
  const recycleAbove = options.recycleAboveBytes ?? 160 * MiB;
  const resultBytes = options.resultBytes ?? 1 * MiB;
  const logBytes = options.logBytes ?? 64 * 1024;
  const maxFetches = options.maxFetches ?? 200;
  const maxBodyBytes = options.maxBodyBytes ?? 4 * MiB;
  const graceMs = options.interruptGraceMs ?? 150;
  const parseTimeoutMs = options.parseTimeoutMs ?? 10_000;
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const idleRetireMs = options.idleRetireMs ?? 5 * 60_000;
  const workerFile = findFile("worker.mjs");
  const pyodideDir = findPyodideDir();

  const slots: Slot[] = [];
  const waiting: { domain: string; resolve(slot: Slot): void; reject(e: Error): void }[] = [];
  // Workers in a row that died before they were ready; reset by one that gets ready.
  let startFailures = 0;
  let nextId = 0;
  let closed = false;
  let started = 0;
  let retired = 0;
  // Spares are kept once bindings are called (a CLI that only parses never starts one).
  let sparesWanted = false;

  // Bound or parse-only workers idle past idleRetireMs are retired; blank spares stay.
  const idleSweep = setInterval(
    () => {
      const now = Date.now();
      for (const slot of [...slots]) {
        if (!slot.alive || slot.busy || !slot.isReady || slot.domain === null) continue;
        // An interpreter kept only for parsing goes sooner: publishing is rare after the start.
        const limit = slot.domain === PARSE_DOMAIN ? Math.min(idleRetireMs, PARSE_IDLE_MS) : idleRetireMs;
        if (now - slot.lastUsed >= limit) retire(slot, `idle for ${Math.round(limit / 1000)} s`);
      }
    },
    Math.max(50, Math.floor(Math.min(idleRetireMs, PARSE_IDLE_MS) / 2)),
  );
  idleSweep.unref();

  function spawn(): Slot {
    const interrupt = new SharedArrayBuffer(4);
    const bridge = new SharedArrayBuffer(8 + BRIDGE_BYTES);
    const worker = new Worker(pathToFileURL(workerFile), {
      workerData: {
        pyodideDir,
        maxMemoryPages: Math.floor(memoryBytes / WASM_PAGE),
        interrupt,
        bridge,
        bridgeBytes: BRIDGE_BYTES,
        pythonSources: { bootstrap: pythonBootstrap() },
      },
      resourceLimits: { maxOldGenerationSizeMb: options.workerHeapMb ?? 128, stackSizeMb: 8 },
      stdout: true,
      stderr: true,
    });
    // Nothing a worker prints reaches the server's output; print() goes to the call's logs.
    worker.stdout.resume();
    worker.stderr.resume();
    started++;
    let markReady: () => void = () => {};
    let markFailed: (e: Error) => void = () => {};
    const slot: Slot = {
      worker,
      domain: null,
      busy: false,
      isReady: false,
      alive: true,
      interrupt: new Int8Array(interrupt),
      bridgeState: new Int32Array(bridge, 0, 2),
      bridgeData: new Uint8Array(bridge, 8, BRIDGE_BYTES),
      memoryBytes: 0,
      lastUsed: Date.now(),
      ready: new Promise<void>((resolve, reject) => {
        markReady = resolve;
        markFailed = reject;
      }),
    };
    slot.ready.catch(() => {});
    worker.on("message", (message: { t: string; [k: string]: unknown }) => {
      if (message.t === "ready") {
        slot.isReady = true;
        startFailures = 0;
        // An idle worker never keeps the process alive (CLI commands exit when done).
        if (!slot.busy) worker.unref();
        slot.memoryBytes = message.memoryBytes as number;
        markReady();
        pump();
      } else if (message.t === "done" || message.t === "parsed") {
        const job = slot.job;
        if (!job || job.id !== message.id) return;
        slot.job = undefined;
        slot.memoryBytes = (message.memoryBytes as number | undefined) ?? slot.memoryBytes;
        job.resolve({
          json: message.json as string,
          logs: (message.logs as LogEntry[] | undefined) ?? [],
          durationMs: (message.durationMs as number | undefined) ?? 0,
          memoryBytes: slot.memoryBytes,
        });
      } else if (message.t === "fetch") {
        void onFetch(slot, message.id as number, message.json as string);
      }
    });
    worker.on("error", (error) => {
      slot.exitReason = error.message;
    });
    worker.on("exit", () => {
      const diedStarting = slot.alive && !slot.isReady;
      slot.alive = false;
      const index = slots.indexOf(slot);
      if (index >= 0) slots.splice(index, 1);
      markFailed(new Error(slot.exitReason ?? "the python worker stopped while starting"));
      if (diedStarting && !closed && ++startFailures >= MAX_START_FAILURES) {
        // An interpreter that cannot start will not do better on the next try: the waiting calls
        // get the reason now instead of waiting out their bound. The next call tries again.
        startFailures = 0;
        const reason = `the Python interpreter fails to start (${MAX_START_FAILURES} tries): ${slot.exitReason ?? "the worker exited"}`;
        for (const w of waiting.splice(0)) w.reject(new StartFailure(reason, false));
        return;
      }
      const job = slot.job;
      slot.job = undefined;
      if (job) {
        const reason = slot.exitReason ?? "the python worker stopped";
        const oom = /memory|allocation/i.test(reason);
        job.resolve({
          json: JSON.stringify({ ok: false, kind: oom ? "out_of_memory" : "internal", message: reason }),
          logs: [],
          durationMs: 0,
          memoryBytes: 0,
        });
      }
      if (!closed) pump();
    });
    slots.push(slot);
    return slot;
  }

  function retire(slot: Slot, reason: string): void {
    if (!slot.alive) return;
    slot.alive = false;
    slot.exitReason = reason;
    retired++;
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    void slot.worker.terminate();
  }

  async function onFetch(slot: Slot, id: number, json: string): Promise<void> {
    const job = slot.job;
    const answer = (value: unknown) => {
      if (!slot.alive || slot.job !== job) return;
      let bytes = Buffer.from(JSON.stringify(value), "utf8");
      if (bytes.byteLength > BRIDGE_BYTES) {
        bytes = Buffer.from(
          JSON.stringify({ ok: false, error: { kind: "too_large", message: "the response is too large" } }),
        );
      }
      slot.bridgeData.set(bytes, 0);
      Atomics.store(slot.bridgeState, 1, bytes.byteLength);
      Atomics.store(slot.bridgeState, 0, 1);
      Atomics.notify(slot.bridgeState, 0);
    };
    if (!job || job.id !== id) return;
    job.fetches++;
    if (job.fetches > maxFetches) {
      answer({
        ok: false,
        error: { kind: "limit", message: `more than ${maxFetches} HTTP requests in one call` },
      });
      return;
    }
    let req: HostFetchRequest & { timeoutMs?: number };
    try {
      req = JSON.parse(json) as HostFetchRequest & { timeoutMs?: number };
    } catch {
      answer({ ok: false, error: { kind: "bad_input", message: "malformed request" } });
      return;
    }
    if (!isHostAllowed(req.url, job.allowedHosts)) {
      let host = req.url;
      try {
        host = new URL(req.url).host;
      } catch {
        // keep the raw text
      }
      answer({
        ok: false,
        error: {
          kind: "forbidden",
          message: `host ${host} is not among this toolset's allowed hosts (${job.allowedHosts.join(", ") || "none"}); an admin adds it in the console (Toolsets → settings → hosts), or declare it with @hosts in the module docstring`,
        },
      });
      return;
    }
    try {
      const signal =
        typeof req.timeoutMs === "number" && req.timeoutMs > 0
          ? AbortSignal.any([job.controller.signal, AbortSignal.timeout(req.timeoutMs)])
          : job.controller.signal;
      const { timeoutMs: _ignored, ...plain } = req;
      const response = await job.egress(
        {
          url: plain.url,
          method: plain.method ?? "GET",
          headers: plain.headers ?? {},
          ...(plain.body === undefined ? {} : { body: plain.body }),
        },
        signal,
      );
      answer({ ok: true, response });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const timeout =
        (isAppError(error) && error.code === "LIMIT_EXCEEDED" && /timed out/.test(message)) ||
        (error instanceof Error && error.name === "TimeoutError");
      answer({ ok: false, error: { kind: timeout ? "timeout" : "failed", message } });
    }
  }

  function pump(): void {
    while (waiting.length > 0 && !closed) {
      const next = waiting[0];
      if (!next) break;
      const slot = pick(next.domain);
      if (!slot) break;
      waiting.shift();
      next.resolve(slot);
    }
    topUpSpares();
  }

  function topUpSpares(): void {
    if (closed || !sparesWanted) return;
    const spares = slots.filter((s) => s.domain === null && !s.busy).length;
    for (let i = spares; i < spareTarget && slots.length < maxWorkers; i++) spawn();
  }

  /** A ready slot for `domain` (taken, marked busy), or undefined when none can be had now. */
  function pick(domain: string): Slot | undefined {
    const own = slots.find((s) => s.alive && !s.busy && s.domain === domain && s.isReady);
    const blank = own ?? slots.find((s) => s.alive && !s.busy && s.domain === null && s.isReady);
    const slot = blank;
    if (!slot) {
      // A worker still starting for this domain, or a blank one, will do once ready.
      const starting = slots.some(
        (s) => s.alive && !s.busy && !s.isReady && (s.domain === null || s.domain === domain),
      );
      if (starting) return undefined;
      if (slots.length >= maxWorkers) {
        const idle = slots
          .filter((s) => s.alive && !s.busy && s.isReady && s.domain !== domain)
          .sort((a, b) => a.lastUsed - b.lastUsed)[0];
        if (!idle) return undefined;
        retire(idle, "evicted for another toolset");
      }
      spawn();
      return undefined;
    }
    slot.busy = true;
    slot.worker.ref();
    slot.domain = domain;
    slot.lastUsed = Date.now();
    return slot;
  }

  interface AcquireOptions {
    signal?: AbortSignal;
    /** Called when the slot is not there at once; returns what ends the wait's side effect. */
    onWait?: () => () => void;
  }

  /**
   * A ready interpreter for `domain`. When none is ready now (a cold start, or every worker busy),
   * waits at most `startTimeoutMs` and then fails with a StartFailure that says so.
   */
  function acquire(domain: string, options: AcquireOptions = {}): Promise<Slot> {
    if (closed) return Promise.reject(new Error("the python runtime is closed"));
    return new Promise<Slot>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let endWait: (() => void) | undefined;
      const settle = () => {
        if (timer) clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        endWait?.();
        endWait = undefined;
      };
      const entry = {
        domain,
        resolve(slot: Slot) {
          settle();
          resolve(slot);
        },
        reject(error: Error) {
          settle();
          reject(error);
        },
      };
      const leave = (error: Error) => {
        const i = waiting.indexOf(entry);
        if (i < 0) return;
        waiting.splice(i, 1);
        entry.reject(error);
      };
      const onAbort = () => leave(new Error("the call was cancelled"));
      options.signal?.addEventListener("abort", onAbort, { once: true });
      waiting.push(entry);
      pump();
      if (!waiting.includes(entry)) return;
      endWait = options.onWait?.();
      timer = setTimeout(() => {
        const starting = slots.some((s) => s.alive && !s.isReady);
        leave(
          new StartFailure(
            `no Python interpreter was ready within ${startTimeoutMs} ms, so the code did not run (${
              starting
                ? "the interpreter was still starting: a cold start loads Pyodide, which takes seconds and far longer on a loaded machine"
                : `all ${maxWorkers} interpreters were busy`
            }). The toolset's own timeout was not used; retry the call (a started interpreter stays warm for the next one)`,
            true,
          ),
        );
      }, startTimeoutMs);
      timer.unref?.();
    });
  }

  function release(slot: Slot): void {
    slot.busy = false;
    slot.worker.unref();
    slot.lastUsed = Date.now();
    if (slot.alive && slot.memoryBytes > recycleAbove) retire(slot, "memory grew past the recycle threshold");
    pump();
  }

  interface Sent {
    done: WorkerDone;
    timedOut: boolean;
    cancelled: boolean;
  }

  async function send(
    slot: Slot,
    message: Record<string, unknown>,
    timeoutMs: number,
    job: Omit<CallJob, "id" | "resolve" | "fetches" | "controller">,
    signal?: AbortSignal,
  ): Promise<Sent> {
    const id = ++nextId;
    const controller = new AbortController();
    let timedOut = false;
    let cancelled = false;
    const done = await new Promise<WorkerDone>((resolve) => {
      slot.job = { id, resolve, fetches: 0, controller, ...job };
      Atomics.store(slot.interrupt, 0, 0);
      Atomics.store(slot.bridgeState, 0, 0);
      const stop = (why: "timeout" | "cancel") => {
        if (slot.job?.id !== id) return;
        if (why === "timeout") timedOut = true;
        else cancelled = true;
        controller.abort();
        // SIGINT: a plain loop stops as KeyboardInterrupt; C loops and BaseException catchers do not.
        Atomics.store(slot.interrupt, 0, 2);
        setTimeout(() => {
          if (slot.job?.id === id) {
            slot.job = undefined;
            retire(slot, why === "timeout" ? "deadline passed" : "cancelled");
            resolve({ json: "", logs: [], durationMs: timeoutMs, memoryBytes: 0 });
          }
        }, graceMs).unref?.();
      };
      const timer = setTimeout(() => stop("timeout"), timeoutMs);
      const onAbort = () => stop("cancel");
      signal?.addEventListener("abort", onAbort, { once: true });
      const originalResolve = slot.job.resolve;
      slot.job.resolve = (value) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        originalResolve(value);
      };
      slot.worker.postMessage({ ...message, id });
    });
    return { done, timedOut, cancelled };
  }

  async function runScript(request: RunScriptRequest): Promise<BindingResult> {
    return runCall(
      {
        // One trust domain per script text: a script never shares an interpreter with a toolset.
        trustDomain: `skill:${request.file}@${hashText(request.code)}`,
        code: request.code,
        exportName: "main",
        args: [],
        env: {},
        allowedHosts: [],
        timeoutMs: request.timeoutMs,
        ...(request.signal ? { signal: request.signal } : {}),
        ...(request.pauseDeadline ? { pauseDeadline: request.pauseDeadline } : {}),
      },
      { script: request.file, input: request.input ?? null },
    );
  }

  function runBinding(request: RunBindingRequest): Promise<BindingResult> {
    return runCall(request);
  }

  async function runCall(
    request: RunBindingRequest,
    script?: { script: string; input: unknown },
  ): Promise<BindingResult> {
    const started = performance.now();
    const secrets = [...(request.redact ?? []), ...Object.values(request.secrets ?? {})].filter(
      (s) => s.length > 0,
    );
    const fail = (
      kind: SandboxErrorKind,
      message: string,
      logs: LogEntry[] = [],
      startup = false,
    ): BindingResult => ({
      ok: false,
      error: { kind, message: redactText(message, secrets), ...(startup ? { startup } : {}) },
      logs: logs.map((l) => ({ ...l, text: redactText(l.text, secrets) })),
      durationMs: performance.now() - started,
    });
    sparesWanted = true;
    const domain = request.trustDomain ?? `anonymous:${request.code.length}:${hashText(request.code)}`;
    if (domain.startsWith(PARSE_DOMAIN)) return fail("refused", "reserved trust domain");
    const limit = Math.min(resultBytes, request.limits?.resultBytes ?? resultBytes);
    let slot: Slot;
    try {
      // Waiting for an interpreter is not the caller's time: its deadline pauses (the wait has its
      // own bound), and the toolset's timeout starts in send(), once the code can run.
      slot = await acquire(domain, {
        ...(request.signal ? { signal: request.signal } : {}),
        ...(request.pauseDeadline ? { onWait: request.pauseDeadline } : {}),
      });
    } catch (error) {
      if (error instanceof StartFailure) {
        return fail(error.timedOut ? "timeout" : "internal", error.message, [], true);
      }
      return fail("internal", (error as Error).message);
    }
    const egress =
      options.egress?.(request) ??
      request.fetch ??
      // The same host egress as TypeScript toolsets: the allow-list, `{{secret:NAME}}` filled in
      // for declared hosts only, and every secret value masked in what comes back.
      createEgressFetch({
        allowedHosts: request.allowedHosts,
        secrets: request.secrets ?? {},
        redact: request.redact ?? [],
        timeoutMs: request.timeoutMs,
        maxBodyBytes,
        ...(options.hostAliases ? { hostAliases: options.hostAliases } : {}),
      });
    const kwargs: Record<string, unknown> = { ...(request.kwargs ?? {}) };
    try {
      const sent = await send(
        slot,
        {
          t: "call",
          code: request.code,
          request: JSON.stringify(script ?? { function: request.exportName, kwargs, env: request.env }),
          resultBytes: limit,
          logBytes: request.limits?.logBytes ?? logBytes,
        },
        request.timeoutMs,
        { egress, allowedHosts: request.allowedHosts },
        request.signal,
      );
      const logs = sent.done.logs;
      if (sent.timedOut)
        return fail("timeout", `the binding ran longer than ${request.timeoutMs} ms and was stopped`, logs);
      if (sent.cancelled) return fail("internal", "the call was cancelled", logs);
      let outcome: { ok: boolean; kind?: string; message?: string; json?: string };
      try {
        outcome = JSON.parse(sent.done.json);
      } catch {
        return fail("internal", "the python worker sent a malformed answer", logs);
      }
      if (outcome.ok) {
        const text = redactText(outcome.json ?? "null", secrets);
        if (text.length > limit)
          return fail("threw", `the result is larger than the limit of ${limit} characters`, logs);
        return {
          ok: true,
          value: JSON.parse(text),
          logs: logs.map((l) => ({ ...l, text: redactText(l.text, secrets) })),
          durationMs: performance.now() - started,
        };
      }
      if (outcome.kind === "out_of_memory") {
        retire(slot, "ran out of memory");
        return fail("out_of_memory", outcome.message ?? "out of memory", logs);
      }
      if (outcome.kind === "interrupted") {
        return fail("timeout", `the binding ran longer than ${request.timeoutMs} ms and was stopped`, logs);
      }
      // A JavaScript-level failure may leave the interpreter broken: never reuse that worker.
      if (outcome.kind === "internal") retire(slot, "the interpreter failed");
      const kind: SandboxErrorKind = outcome.kind === "internal" ? "internal" : "threw";
      return fail(kind, outcome.message ?? "the binding failed", logs);
    } finally {
      release(slot);
    }
  }

  async function parse(source: string): Promise<PythonParseOutput> {
    let slot: Slot;
    try {
      slot = await acquire(PARSE_DOMAIN);
    } catch (error) {
      throw new Error(`parsing toolset.py could not start: ${(error as Error).message}`);
    }
    try {
      const sent = await send(slot, { t: "parse", source }, parseTimeoutMs, {
        egress: async () => Promise.reject(new Error("no network while parsing")),
        allowedHosts: [],
      });
      if (sent.timedOut) throw new Error(`parsing toolset.py took longer than ${parseTimeoutMs} ms`);
      const out = JSON.parse(sent.done.json) as PythonParseOutput & { ok?: boolean; message?: string };
      if (out.ok === false) throw new Error(`parsing toolset.py failed: ${out.message}`);
      return out;
    } finally {
      release(slot);
    }
  }

  return {
    language: "python",
    runBinding,
    runScript,
    parse,
    async warm() {
      sparesWanted = true;
      topUpSpares();
      if (slots.length === 0) spawn();
      await Promise.race(slots.map((s) => s.ready));
    },
    stats() {
      return {
        workers: slots.length,
        busy: slots.filter((s) => s.busy).length,
        spare: slots.filter((s) => s.domain === null).length,
        domains: slots.map((s) => s.domain).filter((d): d is string => d !== null),
        started,
        retired,
      };
    },
    async close() {
      closed = true;
      clearInterval(idleSweep);
      for (const w of waiting.splice(0)) w.reject(new Error("the python runtime is closed"));
      await Promise.allSettled(slots.splice(0).map((s) => s.worker.terminate()));
    },
  };
}

function hashText(text: string): string {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return (h >>> 0).toString(16);
}
