/**
 * One Python worker thread (worker.mjs) and the slot the runtime keeps for it: its wasm memory cap,
 * its interrupt buffer (SIGINT at a deadline), and the shared buffer of its synchronous host bridge.
 * Nothing a worker prints reaches the server's output. What its messages mean is decided by the
 * runtime's parts (interpreter-pool.ts, call-protocol.ts, host-bridge.ts).
 */
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { BindingHost } from "../sandbox/binding-host";
import type { LogEntry } from "../sandbox/protocol";
import { findPyodideDir, findPythonFile, pythonBootstrap } from "./worker-files";

const WASM_PAGE = 64 * 1024;
/** Room for one host reply (a response body with its headers) on the bridge. */
export const BRIDGE_BYTES = 12 * 1024 * 1024;

/** What a worker answers for one call or parse. */
export interface WorkerDone {
  json: string;
  logs: LogEntry[];
  durationMs: number;
  memoryBytes: number;
}

/** The call a worker is running: its answer settles `resolve`; its fetches go through `host`. */
export interface CallJob {
  id: number;
  resolve(result: WorkerDone): void;
  /** Aborted at the deadline or on cancel: the call's requests in flight stop. */
  controller: AbortController;
  /** None while parsing (no network). */
  host?: BindingHost;
}

export interface InterpreterSlot {
  worker: Worker;
  /** The trust domain it serves; null while blank (a spare). */
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

/** A worker's message other than `ready`: `done`, `parsed` or `fetch`. */
export interface WorkerMessage {
  t: string;
  [key: string]: unknown;
}

export interface InterpreterWorkerOptions {
  memoryBytes: number;
  workerHeapMb: number;
}

export interface InterpreterEvents {
  ready(slot: InterpreterSlot): void;
  message(slot: InterpreterSlot, message: WorkerMessage): void;
  exit(slot: InterpreterSlot, failStart: (error: Error) => void): void;
}

/** A function that starts one worker; the files it loads are found once, now. */
export function createInterpreterSpawner(
  options: InterpreterWorkerOptions,
  events: InterpreterEvents,
): () => InterpreterSlot {
  const workerFile = findPythonFile("worker.mjs");
  const pyodideDir = findPyodideDir();
  return () => {
    const interrupt = new SharedArrayBuffer(4);
    const bridge = new SharedArrayBuffer(8 + BRIDGE_BYTES);
    const worker = new Worker(pathToFileURL(workerFile), {
      workerData: {
        pyodideDir,
        maxMemoryPages: Math.floor(options.memoryBytes / WASM_PAGE),
        interrupt,
        bridge,
        bridgeBytes: BRIDGE_BYTES,
        pythonSources: { bootstrap: pythonBootstrap() },
      },
      resourceLimits: { maxOldGenerationSizeMb: options.workerHeapMb, stackSizeMb: 8 },
      stdout: true,
      stderr: true,
    });
    // Nothing a worker prints reaches the server's output; print() goes to the call's logs.
    worker.stdout.resume();
    worker.stderr.resume();
    let markReady: () => void = () => {};
    let markFailed: (e: Error) => void = () => {};
    const slot: InterpreterSlot = {
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
    worker.on("message", (message: WorkerMessage) => {
      if (message.t !== "ready") return events.message(slot, message);
      slot.isReady = true;
      slot.memoryBytes = message.memoryBytes as number;
      markReady();
      events.ready(slot);
    });
    worker.on("error", (error) => {
      slot.exitReason = error.message;
    });
    worker.on("exit", () => events.exit(slot, markFailed));
    return slot;
  };
}
