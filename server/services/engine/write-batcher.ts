/**
 * Groups the engine's audit writes (run rows, gate decisions, outbox events) issued in the same
 * tick into ONE batch transaction: on SQLite with synchronous=FULL every commit is an fsync, and
 * a run would otherwise commit seven times. Batch (non-interactive) transactions are safe on the
 * shared SQLite connection. If a batch fails, its writes are retried one by one, so a
 * bad row fails only its own caller.
 */
import type { Db } from "../../db";

/** A deferred Prisma operation: built when the batch runs, so it can be built again for a retry. */
export type WriteOp<T> = () => PromiseLike<T>;

export interface WriteBatcher {
  write<T>(op: WriteOp<T>): Promise<T>;
}

interface Pending {
  op: WriteOp<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export function createWriteBatcher(db: Db): WriteBatcher {
  let queue: Pending[] = [];
  let scheduled = false;

  async function runAlone(p: Pending): Promise<void> {
    try {
      p.resolve(await p.op());
    } catch (error) {
      p.reject(error);
    }
  }

  async function flush(): Promise<void> {
    scheduled = false;
    const batch = queue;
    queue = [];
    const [only] = batch;
    if (batch.length === 1 && only) return runAlone(only);
    try {
      // biome-ignore lint/suspicious/noExplicitAny: Prisma's batch API takes its own promise type.
      const results = await db.$transaction(batch.map((p) => p.op()) as any[]);
      for (const [i, p] of batch.entries()) p.resolve(results[i]);
    } catch {
      for (const p of batch) await runAlone(p);
    }
  }

  return {
    write<T>(op: WriteOp<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ op, resolve: resolve as (v: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(() => void flush());
        }
      });
    },
  };
}
