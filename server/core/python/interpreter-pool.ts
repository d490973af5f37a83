/**
 * The Python runtime's interpreters: at most `maxWorkers` worker threads, one trust domain each
 * (a worker that has run a toolset's code serves only that toolset until it is retired), blank
 * spares kept warm for a first call, the least recently used idle worker evicted for another
 * domain when all are taken, bound workers retired once idle a while or grown past the recycle
 * threshold, and waiting calls told why when interpreters keep failing to start.
 */
import { type AcquireOptions, createInterpreterQueue, StartFailure } from "./interpreter-queue";
import {
  createInterpreterSpawner,
  type InterpreterSlot,
  type InterpreterWorkerOptions,
  type WorkerMessage,
} from "./interpreter-workers";

/** The trust domain of interpreters that only parse. */
export const PARSE_DOMAIN = "parse:";
const PARSE_IDLE_MS = 30_000;
/** Workers in a row that may die while starting before the waiting calls are told why. */
const MAX_START_FAILURES = 3;

export interface InterpreterPoolOptions extends InterpreterWorkerOptions {
  maxWorkers: number;
  spareWorkers: number;
  recycleAboveBytes: number;
  startTimeoutMs: number;
  idleRetireMs: number;
  /** A worker's `done`, `parsed` or `fetch` message. */
  message(slot: InterpreterSlot, message: WorkerMessage): void;
}

export interface PythonRuntimeStats {
  workers: number;
  busy: number;
  /** Blank workers (no trust domain yet). */
  spare: number;
  domains: string[];
  started: number;
  retired: number;
}

export interface InterpreterPool {
  /** A ready interpreter for `domain`, busy until `release` (see interpreter-queue.ts). */
  acquire(domain: string, options?: AcquireOptions): Promise<InterpreterSlot>;
  release(slot: InterpreterSlot): void;
  retire(slot: InterpreterSlot, reason: string): void;
  /** Keep spares from now on (a CLI that only parses never starts one). */
  wantSpares(): void;
  warm(): Promise<void>;
  stats(): PythonRuntimeStats;
  close(): Promise<void>;
}

export function createInterpreterPool(options: InterpreterPoolOptions): InterpreterPool {
  const spareTarget = Math.max(0, Math.min(options.spareWorkers, options.maxWorkers));
  const slots: InterpreterSlot[] = [];
  // Workers in a row that died before they were ready; reset by one that gets ready.
  let startFailures = 0;
  let closed = false;
  let started = 0;
  let retired = 0;
  let sparesWanted = false;

  const spawnWorker = createInterpreterSpawner(options, {
    ready: onReady,
    message: options.message,
    exit: onExit,
  });
  const queue = createInterpreterQueue<InterpreterSlot>({
    startTimeoutMs: options.startTimeoutMs,
    take,
    whyNoneReady: () =>
      slots.some((s) => s.alive && !s.isReady)
        ? "the interpreter was still starting: a cold start loads Pyodide, which takes seconds and far longer on a loaded machine"
        : `all ${options.maxWorkers} interpreters were busy`,
  });

  const idleSweep = setInterval(
    () => {
      for (const [slot, limit] of idleToRetire(slots, Date.now(), options.idleRetireMs)) {
        retire(slot, `idle for ${Math.round(limit / 1000)} s`);
      }
    },
    Math.max(50, Math.floor(Math.min(options.idleRetireMs, PARSE_IDLE_MS) / 2)),
  );
  idleSweep.unref();

  function spawn(): InterpreterSlot {
    const slot = spawnWorker();
    started++;
    slots.push(slot);
    return slot;
  }

  function onReady(slot: InterpreterSlot): void {
    startFailures = 0;
    // An idle worker never keeps the process alive (CLI commands exit when done).
    if (!slot.busy) slot.worker.unref();
    pump();
  }

  function onExit(slot: InterpreterSlot, failStart: (error: Error) => void): void {
    const diedStarting = slot.alive && !slot.isReady;
    slot.alive = false;
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    failStart(new Error(slot.exitReason ?? "the python worker stopped while starting"));
    if (diedStarting && !closed && ++startFailures >= MAX_START_FAILURES) {
      // An interpreter that cannot start will not do better on the next try: the waiting calls
      // get the reason now instead of waiting out their bound. The next call tries again.
      startFailures = 0;
      const reason = `the Python interpreter fails to start (${MAX_START_FAILURES} tries): ${slot.exitReason ?? "the worker exited"}`;
      queue.rejectAll(new StartFailure(reason, false));
      return;
    }
    const job = slot.job;
    slot.job = undefined;
    if (job) {
      const reason = slot.exitReason ?? "the python worker stopped";
      const kind = /memory|allocation/i.test(reason) ? "out_of_memory" : "internal";
      job.resolve({
        json: JSON.stringify({ ok: false, kind, message: reason }),
        logs: [],
        durationMs: 0,
        memoryBytes: 0,
      });
    }
    if (!closed) pump();
  }

  function retire(slot: InterpreterSlot, reason: string): void {
    if (!slot.alive) return;
    slot.alive = false;
    slot.exitReason = reason;
    retired++;
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    void slot.worker.terminate();
  }

  function pump(): void {
    queue.pump();
    topUpSpares();
  }

  function topUpSpares(): void {
    if (closed || !sparesWanted) return;
    const spares = slots.filter((s) => s.domain === null && !s.busy).length;
    for (let i = spares; i < spareTarget && slots.length < options.maxWorkers; i++) spawn();
  }

  function take(domain: string): InterpreterSlot | undefined {
    const plan = planPick(slots, domain, options.maxWorkers);
    if (plan.take) {
      const slot = plan.take;
      slot.busy = true;
      slot.worker.ref();
      slot.domain = domain;
      slot.lastUsed = Date.now();
      return slot;
    }
    if (plan.evict) retire(plan.evict, "evicted for another toolset");
    if (plan.spawn) spawn();
    return undefined;
  }

  return {
    acquire: queue.acquire,
    retire,
    release(slot) {
      slot.busy = false;
      slot.worker.unref();
      slot.lastUsed = Date.now();
      if (slot.alive && slot.memoryBytes > options.recycleAboveBytes) {
        retire(slot, "memory grew past the recycle threshold");
      }
      pump();
    },
    wantSpares() {
      sparesWanted = true;
    },
    async warm() {
      sparesWanted = true;
      topUpSpares();
      if (slots.length === 0) spawn();
      await Promise.race(slots.map((s) => s.ready));
    },
    stats: () => ({
      workers: slots.length,
      busy: slots.filter((s) => s.busy).length,
      spare: slots.filter((s) => s.domain === null).length,
      domains: slots.map((s) => s.domain).filter((d): d is string => d !== null),
      started,
      retired,
    }),
    async close() {
      closed = true;
      clearInterval(idleSweep);
      queue.close();
      await Promise.allSettled(slots.splice(0).map((s) => s.worker.terminate()));
    },
  };
}

type PickedSlot = Pick<InterpreterSlot, "alive" | "busy" | "isReady" | "domain" | "lastUsed">;

/**
 * What a call for `domain` gets now: a ready idle worker of its own domain, else a blank one;
 * else nothing yet, and a new worker started (evicting the least recently used idle worker of
 * another domain when all `maxWorkers` are there) unless one that would do is already starting.
 */
export function planPick<S extends PickedSlot>(
  slots: readonly S[],
  domain: string,
  maxWorkers: number,
): { take?: S; spawn?: boolean; evict?: S } {
  const idleReady = (s: S) => s.alive && !s.busy && s.isReady;
  const own = slots.find((s) => idleReady(s) && s.domain === domain);
  const blank = own ?? slots.find((s) => idleReady(s) && s.domain === null);
  if (blank) return { take: blank };
  // A worker still starting for this domain, or a blank one, will do once ready.
  if (slots.some((s) => s.alive && !s.busy && !s.isReady && (s.domain === null || s.domain === domain))) {
    return {};
  }
  if (slots.length < maxWorkers) return { spawn: true };
  const evict = slots
    .filter((s) => idleReady(s) && s.domain !== domain)
    .sort((a, b) => a.lastUsed - b.lastUsed)[0];
  return evict ? { spawn: true, evict } : {};
}

/**
 * Bound or parse-only workers idle too long, with the limit each passed; blank spares stay. An
 * interpreter kept only for parsing goes sooner: publishing is rare after the start.
 */
export function idleToRetire<S extends PickedSlot>(
  slots: readonly S[],
  now: number,
  idleRetireMs: number,
): [S, number][] {
  const out: [S, number][] = [];
  for (const slot of slots) {
    if (!slot.alive || slot.busy || !slot.isReady || slot.domain === null) continue;
    const limit = slot.domain === PARSE_DOMAIN ? Math.min(idleRetireMs, PARSE_IDLE_MS) : idleRetireMs;
    if (now - slot.lastUsed >= limit) out.push([slot, limit]);
  }
  return out;
}
