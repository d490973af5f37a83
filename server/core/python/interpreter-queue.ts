/**
 * Calls waiting for an interpreter, first come first served. A wait is bounded (`startTimeoutMs`:
 * a cold start, or every worker busy), can be cancelled by the call's signal, and runs a side
 * effect while it lasts (the caller's deadline paused). Which interpreter a call gets is the
 * pool's choice (`take`); this only keeps the line.
 */

/** No interpreter could be had for a call: none got ready in time, or none can start. */
export class StartFailure extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

export interface AcquireOptions {
  signal?: AbortSignal;
  /** Called when the slot is not there at once; returns what ends the wait's side effect. */
  onWait?: () => () => void;
}

export interface InterpreterQueueOptions<S> {
  startTimeoutMs: number;
  /** A ready interpreter for `domain`, taken for the caller; undefined when none can be had now. */
  take(domain: string): S | undefined;
  /** Why a wait ran out: the interpreter still starting, or all of them busy. */
  whyNoneReady(): string;
}

export interface InterpreterQueue<S> {
  acquire(domain: string, options?: AcquireOptions): Promise<S>;
  /** Hand out what can be had now, in order. */
  pump(): void;
  /** Every waiting call fails with `error` (the interpreter cannot start, the runtime closes). */
  rejectAll(error: Error): void;
  close(): void;
}

interface Waiter<S> {
  domain: string;
  resolve(slot: S): void;
  reject(error: Error): void;
}

export function createInterpreterQueue<S>(options: InterpreterQueueOptions<S>): InterpreterQueue<S> {
  const waiting: Waiter<S>[] = [];
  let closed = false;

  function pump(): void {
    while (waiting.length > 0 && !closed) {
      const next = waiting[0];
      if (!next) break;
      const slot = options.take(next.domain);
      if (!slot) break;
      waiting.shift();
      next.resolve(slot);
    }
  }

  function acquire(domain: string, acquireOptions: AcquireOptions = {}): Promise<S> {
    if (closed) return Promise.reject(new Error("the python runtime is closed"));
    return new Promise<S>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let endWait: (() => void) | undefined;
      const settle = () => {
        if (timer) clearTimeout(timer);
        acquireOptions.signal?.removeEventListener("abort", onAbort);
        endWait?.();
        endWait = undefined;
      };
      const entry: Waiter<S> = {
        domain,
        resolve(slot) {
          settle();
          resolve(slot);
        },
        reject(error) {
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
      acquireOptions.signal?.addEventListener("abort", onAbort, { once: true });
      waiting.push(entry);
      pump();
      if (!waiting.includes(entry)) return;
      endWait = acquireOptions.onWait?.();
      timer = setTimeout(() => {
        leave(
          new StartFailure(
            `no Python interpreter was ready within ${options.startTimeoutMs} ms, so the code did not run (${options.whyNoneReady()}). The toolset's own timeout was not used; retry the call (a started interpreter stays warm for the next one)`,
            true,
          ),
        );
      }, options.startTimeoutMs);
      timer.unref?.();
    });
  }

  return {
    acquire,
    pump,
    rejectAll(error) {
      for (const w of waiting.splice(0)) w.reject(error);
    },
    close() {
      closed = true;
      for (const w of waiting.splice(0)) w.reject(new Error("the python runtime is closed"));
    },
  };
}
