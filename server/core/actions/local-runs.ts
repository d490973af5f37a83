/**
 * The runs of this process, by id: the handle a cancel from anywhere aborts. While any is active,
 * the run store is asked every `pollMs` whether someone (maybe on another instance) requested a
 * cancel; a push channel calls `checkCancels()` sooner.
 */
import type { RunStore } from "./ports";

const DEFAULT_CANCEL_POLL_MS = 500;

export interface LocalRuns {
  /** Tracks a run started here until `remove`; starts the cancel poll if it was idle. */
  add(runId: string, controller: AbortController): void;
  remove(runId: string): void;
  /** Aborts a run if it runs in this process; false otherwise. */
  abortLocal(runId: string, reason: string): boolean;
  /** Aborts the local runs someone asked (through the run store) to cancel. */
  checkCancels(): Promise<void>;
}

export function createLocalRuns(
  runs: Pick<RunStore, "cancelRequested">,
  pollMs = DEFAULT_CANCEL_POLL_MS,
): LocalRuns {
  const active = new Map<string, AbortController>();
  let cancelTimer: ReturnType<typeof setTimeout> | undefined;
  let checking = false;

  function abortLocal(runId: string, reason: string): boolean {
    const controller = active.get(runId);
    if (!controller) return false;
    controller.abort(new Error(reason));
    return true;
  }

  async function checkCancels(): Promise<void> {
    if (checking || active.size === 0) return;
    checking = true;
    try {
      for (const id of await runs.cancelRequested([...active.keys()])) {
        abortLocal(id, "the run was cancelled");
      }
    } catch {
      // Retried on the next tick; a cancel is never lost, only late.
    } finally {
      checking = false;
    }
  }

  function scheduleCancelCheck(): void {
    if (cancelTimer || active.size === 0) return;
    cancelTimer = setTimeout(() => {
      cancelTimer = undefined;
      void checkCancels().finally(scheduleCancelCheck);
    }, pollMs);
    cancelTimer.unref?.();
  }

  return {
    add(runId, controller) {
      active.set(runId, controller);
      scheduleCancelCheck();
    },
    remove(runId) {
      active.delete(runId);
    },
    abortLocal,
    checkCancels,
  };
}
