/**
 * Gives a sandbox worker's dropped QuickJS instances back to the OS. An instance's linear memory
 * is a WebAssembly.Memory outside the worker's JS heap: when the worker drops an instance, only a
 * GC of the worker's isolate frees it, and an idle worker allocates nothing that would start one.
 * Measured on the durable bench: a burst of 2,000 waiters (hundreds hot at once for their 3 s
 * window, then parked to the database) left each of two idle workers holding 18 dropped instances,
 * 290 MiB of linear memory, for as long as they stayed idle. So a drop schedules one full GC of
 * the worker, coalesced over `delayMs` (a burst of drops costs one collection).
 */
import v8 from "node:v8";
import vm from "node:vm";

export interface Reclaimer {
  /** An instance was dropped: collect within `delayMs`. */
  dropped(): void;
}

export function createReclaimer(delayMs: number): Reclaimer {
  const gc = exposeGc();
  let timer: ReturnType<typeof setTimeout> | undefined;
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
