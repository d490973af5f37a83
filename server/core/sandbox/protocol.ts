/**
 * Messages between the pool (main thread) and a sandbox worker. Only strings, numbers and plain
 * records cross; guest values always travel as JSON text. Types only.
 */
import type { SandboxLimits } from "./limits";

/** `cancelled`: the surface stopped the run (Cancel in the playground, an MCP client that went away). */
export type SandboxErrorKind = "threw" | "timeout" | "out_of_memory" | "refused" | "cancelled" | "internal";

export interface SandboxError {
  kind: SandboxErrorKind;
  message: string;
  stack?: string;
  /** Error name inside the guest (TypeError, CapabilityError, ...), when there was one. */
  name?: string;
}

export interface LogEntry {
  level: "log" | "info" | "warn" | "error" | "debug";
  text: string;
}

interface JobBase {
  /** ES module source. */
  code: string;
  limits: SandboxLimits;
  /** Time the job waited in the pool's queue: it counts against `limits.deadlineMs`. */
  queuedMs?: number;
}

export interface ActionJob extends JobBase {
  kind: "action";
  /** JSON text of the value handed to the default export. */
  inputJson: string;
  /** Mounted modules: module name -> export names. Facades are generated from this. */
  modules: Record<string, string[]>;
  /** Imported library modules: module key (`lib/yaml`) -> their self-contained ES module source. */
  libraries?: Record<string, string>;
  /**
   * The guest's sources of nondeterminism, so a replay takes the same path: Math.random draws
   * from a generator seeded with `seed` (hex), and Date.now()/new Date() return the recorded
   * `clock` readings first, in order, then the real time.
   */
  nondet?: GuestNondet;
}

export interface GuestNondet {
  seed: string;
  clock: number[];
}

export interface BindingJob extends JobBase {
  kind: "binding";
  exportName: string;
  /** JSON text of the positional argument array. */
  argsJson: string;
  /** JSON text of the `env` record. */
  envJson: string;
  /**
   * The pool's id for `code`. The worker keeps the code of each id it is sent, and a later job
   * with the same id comes with `code` empty.
   */
  codeId?: number;
}

export type Job = ActionJob | BindingJob;

export interface WorkerInit {
  /** [0] = absolute deadline (Date.now() ms) of the pump in progress, 0 when idle. */
  watchdog: SharedArrayBuffer;
  /** Keep at most this many idle QuickJS instances. */
  warmModules: number;
  /** An idle instance beyond the most recently used one goes once unused this long. */
  idleModuleMs: number;
  /** An instance whose linear memory grew beyond this takes no new runtime, and goes once empty. */
  retireAboveBytes: number;
  /** Runtimes (runs, warm binding contexts) one QuickJS instance holds at once. */
  runtimesPerModule: number;
}

export type ToWorker =
  /** `deliver`: a binding run beside the action that called it; its result settles that call here. */
  | { t: "start"; id: number; job: Job; deliver?: { id: number; callId: number } }
  /** ok: `json` is the value as JSON text ("" for undefined); not ok: a GuestCallError as JSON text. */
  | { t: "reply"; id: number; callId: number; ok: boolean; json: string }
  | { t: "clock"; id: number; suspended: boolean }
  | { t: "cancel"; id: number; reason: string };

export interface WorkerOutcome {
  ok: boolean;
  /** JSON text of the result; null when the action returned undefined. */
  resultJson: string | null;
  error?: SandboxError;
  logs: LogEntry[];
  /** Console entries dropped or cut to fit the log limits. */
  logsDropped: number;
  /** Guest time actually counted against the deadline. */
  countedMs: number;
  /** QuickJS handles, contexts or runtimes that failed to dispose (the module is dropped when > 0). */
  disposeFailures: number;
  /** A binding call served by a warm context (its module evaluated by an earlier call). */
  warm?: boolean;
  /** An action started in the worker's spare context (made ahead, no guest code run in it). */
  spare?: boolean;
}

export type FromWorker =
  | { t: "ready" }
  /** `clock`: the guest's clock readings since its previous call (an action's journal keeps them). */
  | { t: "call"; id: number; callId: number; name: string; json: string; clock?: number[] }
  | { t: "done"; id: number; outcome: WorkerOutcome };

/** What crosses the port: one message, or the messages of one turn of the worker, in order. */
export type FromWorkerPost = FromWorker | { t: "batch"; messages: FromWorker[] };

/** Index of the action id in the watchdog buffer's Int32 view (after the Float64 deadline). */
export const WATCHDOG_ACTION_SLOT = 2;
export const WATCHDOG_BYTES = 16;
