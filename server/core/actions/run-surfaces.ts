import type { ClientToolRouter } from "../capabilities/types";
import type { EngineEvent } from "../gate/ports";
import { buildEnvelope } from "./envelope";
import type { RunStore } from "./ports";
import type { ActionRunResult } from "./run-action";

const DEFAULT_FINISH_POLL_MS = 1000;

export interface RunSurface {
  onEvent?: (event: EngineEvent) => void;
  /** The connected client (toolstore/ui), for every attempt of the run made here. */
  client?: ClientToolRouter;
  signal?: AbortSignal;
  /** An attempt of the run is live on this instance (a cancel aborts it, not the parked row). */
  live: boolean;
}

export interface SurfaceOptions {
  onEvent?: ((event: EngineEvent) => void) | undefined;
  signal?: AbortSignal | undefined;
  cancelParked: (reason: string) => Promise<boolean>;
  client?: ClientToolRouter | undefined;
  /** Settle with `parked` once the run parks instead of waiting for its result. */
  detachOnPark?: boolean | undefined;
}

export interface RunSurfaces {
  add(runId: string, options: SurfaceOptions): Promise<ActionRunResult>;
  get(runId: string): RunSurface | undefined;
  resolve(runId: string, result: ActionRunResult): void;
  reject(runId: string, error: unknown): void;
  /** The attempt here ended without a result (parked, or the run was taken over): poll for it. */
  watch(runId: string): void;
  /** The attempt here parked the run: a detached caller is let go, any other waits (`watch`). */
  parked(runId: string, approvalId: string): void;
}

interface Entry extends RunSurface {
  detachOnPark: boolean;
  resolve(result: ActionRunResult): void;
  reject(error: unknown): void;
  cleanup(): void;
}

export function createRunSurfaces(
  runs: Pick<RunStore, "finishedAmong">,
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
    try {
      // One read for all of them (10,000 parked runs are 20 queries a tick, not 10,000).
      for (const { id, envelope } of await runs.finishedAmong([...watched])) {
        settle(id, (e) => e.resolve({ runId: id, envelope }));
      }
    } catch {
      // Looked at again on the next tick.
    }
    schedule();
  }

  function schedule(): void {
    if (timer || watched.size === 0) return;
    timer = setTimeout(() => void poll(), pollMs);
    timer.unref?.();
  }

  const watch = (runId: string) => {
    if (!entries.has(runId)) return;
    watched.add(runId);
    schedule();
  };

  return {
    add(runId, { onEvent, signal, cancelParked, client, detachOnPark }) {
      return new Promise<ActionRunResult>((resolve, reject) => {
        const onAbort = () => {
          if (!entry.live)
            void cancelParked("the client went away while the run was parked").catch(() => false);
        };
        const entry: Entry = {
          ...(onEvent ? { onEvent } : {}),
          ...(signal ? { signal } : {}),
          ...(client ? { client } : {}),
          live: false,
          detachOnPark: detachOnPark === true,
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
    watch,
    parked(runId, approvalId) {
      if (!entries.get(runId)?.detachOnPark) return watch(runId);
      const envelope = buildEnvelope({
        error: {
          kind: "ended",
          message: `the run is parked until approval ${approvalId} is answered; its result comes when it resumes`,
        },
        logs: [],
        calls: [],
        images: [],
        durationMs: 0,
      });
      settle(runId, (e) => e.resolve({ runId, envelope, parked: { approvalId } }));
    },
  };
}
