/**
 * Fair share for the pool: one queue per key (an API key, a user, a toolset's lane) served
 * round-robin, a cap on the runs one key has admitted at once, a cap on the workers one key holds,
 * and a queue timeout. A worker only ever holds one key's runs at a time, so a runaway of one key
 * can only slow down (or, through the watchdog, take down) that key's own runs. It knows nothing of
 * worker threads: it is handed the slots, a way to spawn one and a way to start a run on one.
 */

/** What the scheduler reads and writes of a worker. */
export interface SchedulerSlot {
  /** The one key whose runs the worker holds, while it holds any. */
  key: string | undefined;
  alive: boolean;
  jobs: { readonly size: number };
  /** Runs that may be using the worker's thread now. */
  computing: { readonly size: number };
}

export interface SchedulerOptions<J extends { key: string }, S extends SchedulerSlot> {
  maxWorkers: number;
  maxWorkersPerKey: number;
  maxRunsPerKey: number;
  maxJobsPerWorker: number;
  queueTimeoutMs: number;
  /** The pool's live list of workers. */
  slots: readonly S[];
  spawn(key: string): S;
  /** Start `job` on `slot` (it has left the queue, and counts as admitted). */
  start(job: J, slot: S): void;
  /** The job waited too long in the queue and has left it; `message` says so. */
  timedOut(job: J, message: string): void;
}

export interface QueueOptions {
  /** The run's own deadline: it never waits in the queue past it either. */
  deadlineMs: number;
  /** Told when the run has to wait (`true`), and once it leaves the queue (`false`). */
  onQueued?(queued: boolean): void;
}

export interface RunScheduler<J> {
  /** Queue `job` and start it now if its key has room; else it waits for its turn. */
  submit(job: J, options: QueueOptions): void;
  /** Take `job` out of its queue; false when it was not queued. */
  remove(job: J): boolean;
  /** Start every queued run that has room now. */
  drain(): void;
  /** A run of `key` starts counting against its cap (1), or stops (-1: ended, or waits for a human). */
  admit(key: string, delta: number): void;
  admitted(key: string): number;
  queued(): number;
  queueTimeouts(): number;
  /** Empty every queue and return what was in them. */
  takeAll(): J[];
}

interface Waiting {
  timer?: ReturnType<typeof setTimeout>;
  onQueued?: (queued: boolean) => void;
}

export function createRunScheduler<J extends { key: string }, S extends SchedulerSlot>(
  options: SchedulerOptions<J, S>,
): RunScheduler<J> {
  /** Queued runs per key; the Map's order is the round-robin order (a served key moves to the end). */
  const queues = new Map<string, J[]>();
  const waiting = new Map<J, Waiting>();
  const admittedRuns = new Map<string, number>();
  let queuedCount = 0;
  let timeouts = 0;

  /**
   * A worker for the next run of `key`: one of its own that is not computing, else a free one, else
   * a new one (past `maxWorkers` only for a key that holds none, so no key can starve another).
   */
  function pickSlot(key: string): S | undefined {
    let held = 0;
    let own: S | undefined;
    let free: S | undefined;
    for (const slot of options.slots) {
      if (!slot.alive) continue;
      if (slot.key === key) {
        held += 1;
        if (
          slot.computing.size === 0 &&
          slot.jobs.size < options.maxJobsPerWorker &&
          (!own || slot.jobs.size > own.jobs.size)
        )
          own = slot;
      } else if (slot.key === undefined && slot.jobs.size === 0 && !free) free = slot;
    }
    if (own) return own;
    if (held >= options.maxWorkersPerKey) return undefined;
    if (free) {
      free.key = key;
      return free;
    }
    if (options.slots.length < options.maxWorkers || held === 0) return options.spawn(key);
    return undefined;
  }

  function leave(job: J): void {
    const wait = waiting.get(job);
    waiting.delete(job);
    if (wait?.timer) clearTimeout(wait.timer);
    if (!wait?.onQueued) return;
    try {
      wait.onQueued(false);
    } catch {
      // A listener must not break the pool.
    }
  }

  function drain(): void {
    let progressed = true;
    while (progressed && queuedCount > 0) {
      progressed = false;
      for (const [key, list] of [...queues]) {
        const job = list[0];
        if (!job) continue;
        if ((admittedRuns.get(key) ?? 0) >= options.maxRunsPerKey) continue;
        const slot = pickSlot(key);
        if (!slot) continue;
        list.shift();
        queuedCount -= 1;
        // Round-robin: the key just served goes to the back of the line.
        queues.delete(key);
        if (list.length > 0) queues.set(key, list);
        leave(job);
        admit(job.key, 1);
        options.start(job, slot);
        progressed = true;
      }
    }
  }

  function remove(job: J): boolean {
    const list = queues.get(job.key);
    const at = list ? list.indexOf(job) : -1;
    if (!list || at < 0) return false;
    list.splice(at, 1);
    queuedCount -= 1;
    if (list.length === 0) queues.delete(job.key);
    const timer = waiting.get(job)?.timer;
    if (timer) clearTimeout(timer);
    waiting.delete(job);
    return true;
  }

  function admit(key: string, delta: number): void {
    const n = (admittedRuns.get(key) ?? 0) + delta;
    if (n <= 0) admittedRuns.delete(key);
    else admittedRuns.set(key, n);
  }

  function submit(job: J, queue: QueueOptions): void {
    const list = queues.get(job.key);
    if (list) list.push(job);
    else queues.set(job.key, [job]);
    queuedCount += 1;
    const wait: Waiting = {};
    waiting.set(job, wait);
    drain();
    if (!waiting.has(job)) return;
    // Still queued: say so, and give up with a clear error after the queue timeout.
    if (queue.onQueued) {
      wait.onQueued = queue.onQueued;
      try {
        queue.onQueued(true);
      } catch {
        // A listener must not break the pool.
      }
    }
    const waitMs = Math.min(options.queueTimeoutMs, queue.deadlineMs);
    wait.timer = setTimeout(() => {
      if (!remove(job)) return;
      timeouts += 1;
      options.timedOut(job, queueTimeoutMessage(admittedRuns.get(job.key) ?? 0, waitMs, queue.deadlineMs));
    }, waitMs);
    wait.timer.unref?.();
  }

  return {
    submit,
    remove,
    drain,
    admit,
    admitted: (key) => admittedRuns.get(key) ?? 0,
    queued: () => queuedCount,
    queueTimeouts: () => timeouts,
    takeAll() {
      const all = [...queues.values()].flat();
      for (const job of all) remove(job);
      return all;
    },
  };
}

function queueTimeoutMessage(running: number, waitMs: number, deadlineMs: number): string {
  const others = `${running} other run${running === 1 ? "" : "s"} of the same key running`;
  return waitMs === deadlineMs
    ? `the run reached its deadline of ${deadlineMs} ms while it waited in the queue for a sandbox (${others}); nothing of it ran, try again later`
    : `the run waited ${waitMs} ms in the queue for a sandbox and did not start (${others}); nothing of it ran, try again later`;
}
