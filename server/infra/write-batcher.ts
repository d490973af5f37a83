/**
 * Group commit for the engine's audit writes (run rows, gate decisions, outbox events): writes
 * queued together are ONE batch transaction. On SQLite with synchronous=FULL every commit is an
 * fsync, and a run would otherwise commit four times or more.
 *
 * - `write` is for what must be durable before the caller goes on (a write call's decision, a
 *   run's envelope): the queue is committed at once, or, while a commit is in flight, right
 *   after it together with everything that queued meanwhile. With `disk: false` (a run's end)
 *   the commit does not wait for the disk when nothing else in it asked to (runBatch).
 * - `defer` is for what may be written late (a read call's decision, the run row, live events):
 *   it joins the next `write`'s commit, or commits on its own after at most `deferMs`. Queue
 *   order is commit order (writes marked `last` go after the others of their commit), so a
 *   durable write is never committed before a deferred one queued earlier: a run row always
 *   precedes its decisions.
 *
 * Batch (non-interactive) transactions are safe on the shared SQLite connection. If a batch
 * fails, its writes are retried one by one, so a bad row fails only its own caller.
 */
import { type Db, runBatch } from "../db";

/** A deferred Prisma operation: built when the batch runs, so it can be built again for a retry. */
export type WriteOp<T> = () => PromiseLike<T>;

export interface WriteOptions {
  /**
   * false: the commit need not wait for the disk (committed and visible, kept through a crash of
   * the process; a power cut may lose it until the database syncs it, within its bounded lag). For
   * what only records what already happened (a run's end): a commit is lazy only when everything
   * that asked for it is. Default true.
   */
  disk?: boolean;
  /**
   * Run after the commit's other writes: for a multi-row insert that rows of later writes join
   * until the commit starts (their parent rows, queued after it, must go first).
   */
  last?: boolean;
}

export interface WriteBatcher {
  /** Committed at once (with everything queued before it); resolves once it is durable. */
  write<T>(op: WriteOp<T>, options?: WriteOptions): Promise<T>;
  /** Committed with the next `write`, or within `deferMs`; resolves once it is durable. */
  defer<T>(op: WriteOp<T>, options?: WriteOptions): Promise<T>;
  /**
   * Commits everything queued now; resolves once it is durable (failures stay with their callers).
   * `disk: false`: once it is committed (see WriteOptions.disk). With nothing queued, it waits
   * for the commit in flight, as that commit was asked.
   */
  flush(options?: { disk?: boolean }): Promise<void>;
}

/** How long a deferred write may wait for a commit to join. */
export const DEFAULT_DEFER_MS = 50;

interface Pending {
  op: WriteOp<unknown>;
  last: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export function createWriteBatcher(db: Db, options: { deferMs?: number } = {}): WriteBatcher {
  const deferMs = options.deferMs ?? DEFAULT_DEFER_MS;
  let queue: Pending[] = [];
  /** The queue holds a write that must not wait for the timer. */
  let urgent = false;
  /** Someone waits for the next commit to reach the disk (a durable write, a flush, the timer). */
  let wantDisk = false;
  let inFlight = false;
  let immediate = false;
  let timer: NodeJS.Timeout | undefined;
  /** `flush` callers: resolved once the queue as it was when they asked has committed. */
  let waiters: (() => void)[] = [];
  let inFlightDone: Promise<void> = Promise.resolve();

  async function runAlone(p: Pending): Promise<void> {
    try {
      p.resolve(await p.op());
    } catch (error) {
      p.reject(error);
    }
  }

  async function commit(batch: Pending[], disk: boolean): Promise<void> {
    const [only] = batch;
    if (batch.length === 1 && only && disk) return runAlone(only);
    try {
      const results = await runBatch(
        db,
        batch.map((p) => p.op()),
        { disk },
      );
      for (const [i, p] of batch.entries()) p.resolve(results[i]);
    } catch {
      for (const p of batch) await runAlone(p);
    }
  }

  /** Starts a commit now if one is due and none is in flight; else arms what will start it. */
  function schedule(): void {
    if (inFlight || queue.length === 0) return;
    if (urgent) {
      if (!immediate) {
        immediate = true;
        setImmediate(run);
      }
    } else if (!timer) {
      timer = setTimeout(() => {
        timer = undefined;
        urgent = true;
        wantDisk = true;
        schedule();
      }, deferMs);
    }
  }

  function run(): void {
    immediate = false;
    if (inFlight || queue.length === 0) return;
    if (timer) clearTimeout(timer);
    timer = undefined;
    urgent = false;
    const disk = wantDisk;
    wantDisk = false;
    inFlight = true;
    const batch = [...queue.filter((p) => !p.last), ...queue.filter((p) => p.last)];
    const done = waiters;
    queue = [];
    waiters = [];
    inFlightDone = commit(batch, disk).finally(() => {
      inFlight = false;
      for (const resolve of done) resolve();
      schedule();
    });
  }

  function enqueue<T>(op: WriteOp<T>, now: boolean, options?: WriteOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ op, last: options?.last === true, resolve: resolve as (v: unknown) => void, reject });
      if (now) urgent = true;
      if (now && options?.disk !== false) wantDisk = true;
      schedule();
    });
  }

  return {
    write: (op, options) => enqueue(op, true, options),
    defer: (op, options) => enqueue(op, false, options),
    async flush(options) {
      if (queue.length === 0) return inFlightDone;
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        urgent = true;
        if (options?.disk !== false) wantDisk = true;
        schedule();
      });
    },
  };
}
