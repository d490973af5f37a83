/**
 * Gives a sandbox worker's dropped QuickJS instances back to the OS. An instance's linear memory
 * is a WebAssembly.Memory outside the worker's JS heap: when the worker drops an instance, only a
 * GC of the worker's isolate frees it, and an idle worker allocates nothing that would start one.
 * Measured on the durable bench: a burst of 2,000 waiters (hundreds hot at once for their 3 s
 * window, then parked to the database) left each of two idle workers holding 18 dropped instances,
 * 290 MiB of linear memory, for as long as they stayed idle. So a drop schedules one full GC of
 * the worker, coalesced over `delayMs` (a burst of drops costs one collection).
 */
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import vm from "node:vm";

export interface Reclaimer {
  /** An instance was dropped: collect within `delayMs`. */
  dropped(): void;
}

/**
 * The young generation of a worker thread's heap, in MiB (sandbox workers and the SQLite worker;
 * Node's `resourceLimits.maxYoungGenerationSizeMb`). V8's default, 48 MiB (16 MiB semi-spaces),
 * fills under load and stays committed after it: a forced collection does not shrink it, only
 * V8's own memory reducer does, some seconds after a full collection and only if it judges the
 * thread idle. The workers keep a few MiB live, so a smaller nursery costs little.
 */
export const WORKER_YOUNG_GENERATION_MB = 12;

/** How a thread tells that a burst is over, from its own event loop's utilization. */
export interface QuietWatch {
  /** How often it looks. */
  everyMs: number;
  /** Utilization at or below which an interval counts as idle. */
  idleBelow: number;
  /** Idle intervals in a row after which the thread is quiet. */
  quietChecks: number;
}

/**
 * `quiet`: after a burst a worker also holds the pages its heap grew to (its young generation at
 * its maximum: 39-46 MiB committed a worker under 200 MCP clients, 6 MiB of it live), and a worker
 * that gets no more work never collects to give them back; it collects once it is quiet again.
 */
export function createReclaimer(delayMs: number, quiet?: QuietWatch): Reclaimer {
  const gc = exposeGc();
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (gc && quiet) collectWhenQuiet(quiet, async () => gc());
  return {
    dropped() {
      if (!gc || timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        gc();
      }, delayMs);
    },
  };
}

/**
 * The decision `collectWhenQuiet` makes at each look, apart from its clock: `look` is told whether
 * the interval since the last look was busy and whether a collection is due on its own, and says
 * whether to collect now; `collected` is called when that collection has finished.
 */
export function quietJudge(watch: Pick<QuietWatch, "quietChecks">): {
  look(busy: boolean, due: () => boolean): boolean;
  collected(): void;
} {
  let quiet = 0;
  /** An interval since the last collection was busy: a burst came and went. */
  let loaded = false;
  let collecting = false;
  return {
    look(busy, due) {
      if (busy) loaded = true;
      quiet = busy ? 0 : quiet + 1;
      if (collecting || quiet < watch.quietChecks || !(loaded || due())) return false;
      collecting = true;
      return true;
    },
    collected() {
      collecting = false;
      loaded = false;
      quiet = 0;
    },
  };
}

/**
 * Watches this thread's event loop (a worker has its own) and calls `collect` once the thread has
 * been nearly idle for `quietChecks` looks in a row after a busy one, or, while quiet, whenever
 * `due()` says so. One collection at a time, and its own time does not count as load.
 */
export function collectWhenQuiet(
  watch: QuietWatch,
  collect: () => Promise<void>,
  due: () => boolean = () => false,
): { stop(): void } {
  const judge = quietJudge(watch);
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization > watch.idleBelow;
    last = now;
    if (!judge.look(busy, due)) return;
    void collect().finally(() => {
      judge.collected();
      last = performance.eventLoopUtilization();
    });
  }, watch.everyMs);
  timer.unref?.();
  return { stop: () => clearInterval(timer) };
}

/**
 * V8's `gc` for this thread. `--expose-gc` is a V8 flag (a worker's execArgv cannot carry it);
 * set at run time it applies to contexts made after, so a new context hands the function out.
 * undefined where the flag cannot be set: the worker then waits for V8's own collections.
 */
export function exposeGc(): (() => void) | undefined {
  try {
    v8.setFlagsFromString("--expose-gc");
    const gc: unknown = vm.runInNewContext("gc");
    return typeof gc === "function" ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}
