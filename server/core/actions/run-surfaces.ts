/**
 * The surfaces waiting here for their runs' results (an MCP request, a playground tab): one per
 * run started on this instance. An attempt that finishes here hands the result over at once; a
 * run that parked, or that another instance took over, is looked up in the store every
 * `pollMs` until it finished, wherever that happened. A surface that goes away while its run is
 * parked cancels the run, as it would a live one.
 */
import { AppError } from "../errors";
import type { EngineEvent } from "../gate/ports";
import type { RunStore } from "./ports";
import type { ActionRunResult } from "./run-action";

const DEFAULT_FINISH_POLL_MS = 500;
const FINAL = new Set(["ok", "error", "interrupted"]);

export interface RunSurface {
  onEvent?: (event: EngineEvent) => void;
  signal?: AbortSignal;
  /** An attempt of the run is live on this instance (a cancel aborts it, not the parked row). */
  live: boolean;
}

export interface RunSurfaces {
  add(
    runId: string,
    onEvent: ((event: EngineEvent) => void) | undefined,
    signal: AbortSignal | undefined,
    cancelParked: (reason: string) => Promise<boolean>,
  ): Promise<ActionRunResult>;
  get(runId: string): RunSurface | undefined;
  resolve(runId: string, result: ActionRunResult): void;
  reject(runId: string, error: unknown): void;
  /** The attempt here ended without a result (parked, or the run was taken over): poll for it. */
  watch(runId: string): void;
}

interface Entry extends RunSurface {
  resolve(result: ActionRunResult): void;
  reject(error: unknown): void;
  cleanup(): void;
}

export function createRunSurfaces(
  runs: Pick<RunStore, "load">,
  pollMs = DEFAULT_FINISH_POLL_MS,
): RunSurfaces {
  const entries = new Map<string, Entry>();
  const watched = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;

  function settle(runId: string, how: (entry: Entry) => void): void {
    const entry = entries.get(runId);
    watched.delete(runId);
    if (!entry) return;
    entries.delete(runId);
    entry.cleanup();
    how(entry);
  }

  async function poll(): Promise<void> {
    timer = undefined;
    for (const runId of [...watched]) {
      try {
        const stored = await runs.load(runId);
        if (!stored) settle(runId, (e) => e.reject(new AppError("NOT_FOUND", `run ${runId} is gone`)));
        else if (FINAL.has(stored.status) && stored.envelope) {
          const envelope = stored.envelope;
          settle(runId, (e) => e.resolve({ runId, envelope }));
        }
      } catch {
        // Looked at again on the next tick.
      }
    }
    schedule();
  }

  function schedule(): void {
    if (timer || watched.size === 0) return;
    timer = setTimeout(() => void poll(), pollMs);
    timer.unref?.();
  }

  return {
    add(runId, onEvent, signal, cancelParked) {
      return new Promise<ActionRunResult>((resolve, reject) => {
        const onAbort = () => {
          if (!entry.live)
            void cancelParked("the client went away while the run was parked").catch(() => false);
        };
        const entry: Entry = {
          ...(onEvent ? { onEvent } : {}),
          ...(signal ? { signal } : {}),
          live: false,
          resolve,
          reject,
          cleanup: () => signal?.removeEventListener("abort", onAbort),
        };
        entries.set(runId, entry);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    get: (runId) => entries.get(runId),
    resolve: (runId, result) => settle(runId, (e) => e.resolve(result)),
    reject: (runId, error) => settle(runId, (e) => e.reject(error)),
    watch(runId) {
      if (!entries.has(runId)) return;
      watched.add(runId);
      schedule();
    },
  };
}
