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
 * and waits on a shared buffer; this side answers it through the binding host that TypeScript
 * toolsets use too (sandbox/binding-host.ts: allowed hosts, secrets, masking), then writes the
 * response into the buffer.
 *
 * The parts: interpreter-pool.ts (workers, trust domains, spares, eviction), interpreter-queue.ts
 * (calls waiting for an interpreter), call-protocol.ts (a request to a worker and its deadline),
 * host-bridge.ts (httpx's requests), binding-call.ts (one call end to end).
 */
import type { BindingResult, BindingRuntime, RunBindingRequest } from "../sandbox/binding-runtime";
import type { HostFetch } from "../sandbox/host-fetch";
import { hashText, runBindingCall } from "./binding-call";
import { createCallSender } from "./call-protocol";
import { answerHostFetch } from "./host-bridge";
import { createInterpreterPool, PARSE_DOMAIN, type PythonRuntimeStats } from "./interpreter-pool";
import type { PythonParseOutput } from "./parse-python";

export type { PythonRuntimeStats } from "./interpreter-pool";

const MiB = 1024 * 1024;

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
   * The fetch a call's httpx requests go through, under the binding host's egress (secrets filled
   * in, values masked); default createAllowlistFetch over the request's allowed hosts. The host
   * allow-list is checked before it is called, either way.
   */
  egress?: (request: RunBindingRequest) => HostFetch;
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

export function createPythonRuntime(options: PythonRuntimeOptions = {}): PythonRuntime {
  const parseTimeoutMs = options.parseTimeoutMs ?? 10_000;
  const interpreters = createInterpreterPool({
    maxWorkers: Math.max(1, options.maxWorkers ?? 4),
    spareWorkers: options.spareWorkers ?? 1,
    memoryBytes: options.memoryBytes ?? 256 * MiB,
    workerHeapMb: options.workerHeapMb ?? 128,
    recycleAboveBytes: options.recycleAboveBytes ?? 160 * MiB,
    startTimeoutMs: options.startTimeoutMs ?? 60_000,
    idleRetireMs: options.idleRetireMs ?? 5 * 60_000,
    message(slot, message) {
      if (message.t === "done" || message.t === "parsed") sender.answered(slot, message);
      else if (message.t === "fetch")
        void answerHostFetch(slot, message.id as number, message.json as string);
    },
  });
  const sender = createCallSender({ graceMs: options.interruptGraceMs ?? 150, retire: interpreters.retire });
  const deps = {
    interpreters,
    sender,
    resultBytes: options.resultBytes ?? 1 * MiB,
    logBytes: options.logBytes ?? 64 * 1024,
    maxFetches: options.maxFetches ?? 200,
    maxBodyBytes: options.maxBodyBytes ?? 4 * MiB,
    ...(options.hostAliases ? { hostAliases: options.hostAliases } : {}),
    ...(options.egress ? { egress: options.egress } : {}),
  };

  async function parse(source: string): Promise<PythonParseOutput> {
    let slot: Awaited<ReturnType<typeof interpreters.acquire>>;
    try {
      slot = await interpreters.acquire(PARSE_DOMAIN);
    } catch (error) {
      throw new Error(`parsing toolset.py could not start: ${(error as Error).message}`);
    }
    try {
      // No binding host: nothing of the file runs, so there is no network either.
      const sent = await sender.send(slot, { t: "parse", source }, parseTimeoutMs);
      if (sent.timedOut) throw new Error(`parsing toolset.py took longer than ${parseTimeoutMs} ms`);
      const out = JSON.parse(sent.done.json) as PythonParseOutput & { ok?: boolean; message?: string };
      if (out.ok === false) throw new Error(`parsing toolset.py failed: ${out.message}`);
      return out;
    } finally {
      interpreters.release(slot);
    }
  }

  return {
    language: "python",
    runBinding: (request: RunBindingRequest) => runBindingCall(deps, request),
    runScript(request: RunScriptRequest): Promise<BindingResult> {
      const call: RunBindingRequest = {
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
      };
      return runBindingCall(deps, call, { script: request.file, input: request.input ?? null });
    },
    parse,
    warm: interpreters.warm,
    stats: interpreters.stats,
    close: interpreters.close,
  };
}
