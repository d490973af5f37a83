/**
 * One request to a Python worker (`call` or `parse`) and its answer, with the deadline: at the
 * timeout (or on cancel) the call's requests in flight are aborted and the interpreter gets SIGINT
 * through its interrupt buffer; a worker still busy after the grace (a C-level loop, code that
 * catches BaseException) is retired, and the call ends without an answer.
 */
import type { BindingHost } from "../sandbox/binding-host";
import type { LogEntry } from "../sandbox/protocol";
import type { InterpreterSlot, WorkerDone, WorkerMessage } from "./interpreter-workers";

export interface Sent {
  done: WorkerDone;
  timedOut: boolean;
  cancelled: boolean;
}

export interface CallSenderOptions {
  /** Time between the interrupt and the terminate. */
  graceMs: number;
  retire(slot: InterpreterSlot, reason: string): void;
}

export interface CallSender {
  send(
    slot: InterpreterSlot,
    message: Record<string, unknown>,
    timeoutMs: number,
    host?: BindingHost,
    signal?: AbortSignal,
  ): Promise<Sent>;
  /** A worker's `done` or `parsed` message: the answer of the call it runs. */
  answered(slot: InterpreterSlot, message: WorkerMessage): void;
}

export function createCallSender(options: CallSenderOptions): CallSender {
  let nextId = 0;

  async function send(
    slot: InterpreterSlot,
    message: Record<string, unknown>,
    timeoutMs: number,
    host?: BindingHost,
    signal?: AbortSignal,
  ): Promise<Sent> {
    const id = ++nextId;
    const controller = new AbortController();
    let timedOut = false;
    let cancelled = false;
    const done = await new Promise<WorkerDone>((resolve) => {
      const stop = (why: "timeout" | "cancel") => {
        if (slot.job?.id !== id) return;
        if (why === "timeout") timedOut = true;
        else cancelled = true;
        controller.abort();
        // SIGINT: a plain loop stops as KeyboardInterrupt; C loops and BaseException catchers do not.
        Atomics.store(slot.interrupt, 0, 2);
        setTimeout(() => {
          if (slot.job?.id !== id) return;
          slot.job = undefined;
          options.retire(slot, why === "timeout" ? "deadline passed" : "cancelled");
          resolve({ json: "", logs: [], durationMs: timeoutMs, memoryBytes: 0 });
        }, options.graceMs).unref?.();
      };
      const timer = setTimeout(() => stop("timeout"), timeoutMs);
      const onAbort = () => stop("cancel");
      signal?.addEventListener("abort", onAbort, { once: true });
      slot.job = {
        id,
        controller,
        ...(host ? { host } : {}),
        resolve(value) {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(value);
        },
      };
      Atomics.store(slot.interrupt, 0, 0);
      Atomics.store(slot.bridgeState, 0, 0);
      slot.worker.postMessage({ ...message, id });
    });
    return { done, timedOut, cancelled };
  }

  return {
    send,
    answered(slot, message) {
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
    },
  };
}
