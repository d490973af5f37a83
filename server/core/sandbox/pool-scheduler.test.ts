/**
 * The scheduler with stand-in workers: round-robin between keys, the per-key caps on runs and on
 * workers, a worker never shared between keys, and the queue timeout with its message.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRunScheduler, type SchedulerSlot } from "./pool-scheduler";

interface FakeSlot extends SchedulerSlot {
  name: string;
  jobs: Set<string>;
  computing: Set<string>;
}

interface FakeRun {
  key: string;
  name: string;
}

function setup(
  limits: Partial<{ maxWorkers: number; maxWorkersPerKey: number; maxRunsPerKey: number }> = {},
) {
  const slots: FakeSlot[] = [];
  const started: string[] = [];
  const timedOut: string[] = [];
  let spawned = 0;
  const scheduler = createRunScheduler<FakeRun, FakeSlot>({
    maxWorkers: limits.maxWorkers ?? 2,
    maxWorkersPerKey: limits.maxWorkersPerKey ?? 2,
    maxRunsPerKey: limits.maxRunsPerKey ?? 10,
    maxJobsPerWorker: 100,
    queueTimeoutMs: 1_000,
    slots,
    spawn(key) {
      const slot: FakeSlot = {
        name: `w${++spawned}`,
        key,
        alive: true,
        jobs: new Set(),
        computing: new Set(),
      };
      slots.push(slot);
      return slot;
    },
    start(run, slot) {
      // A started run computes until the test says it waits (computing.clear()).
      slot.jobs.add(run.name);
      slot.computing.add(run.name);
      started.push(`${run.name}@${slot.name}`);
    },
    timedOut: (run, message) => timedOut.push(`${run.name}: ${message}`),
  });
  const run = (key: string, name: string, deadlineMs = 60_000, onQueued?: (q: boolean) => void) => {
    const job = { key, name };
    scheduler.submit(job, { deadlineMs, ...(onQueued ? { onQueued } : {}) });
    return job;
  };
  return { scheduler, slots, started, timedOut, run };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("run scheduler", () => {
  it("gives every key a worker of its own and never puts two keys' runs on one worker", () => {
    const { started, run } = setup({ maxWorkers: 1 });
    run("a", "a1");
    run("b", "b1");
    // Past maxWorkers, but b holds no worker: it gets one rather than wait behind a.
    expect(started).toEqual(["a1@w1", "b1@w2"]);
  });

  it("serves queued keys round-robin once a worker is free", () => {
    const { scheduler, slots, started, run } = setup({ maxWorkers: 1, maxWorkersPerKey: 1 });
    run("a", "a1");
    run("a", "a2");
    run("a", "a3");
    run("b", "b1");
    run("b", "b2");
    expect(started).toEqual(["a1@w1", "b1@w2"]);
    for (const slot of slots) slot.computing.clear();
    scheduler.drain();
    // Each key's worker takes its next run: the served key goes to the back of the line.
    expect(started.slice(2)).toEqual(["a2@w1", "b2@w2"]);
    expect(scheduler.queued()).toBe(1);
  });

  it("holds a key's runs past its cap, and counts them again once they stop waiting for a human", () => {
    const { scheduler, slots, started, run } = setup({ maxRunsPerKey: 1 });
    run("a", "a1");
    run("a", "a2");
    expect(started).toEqual(["a1@w1"]);
    for (const slot of slots) slot.computing.clear();
    scheduler.drain();
    expect(started).toHaveLength(1);
    scheduler.admit("a", -1); // a1 parks (an approval is pending)
    scheduler.drain();
    expect(started).toEqual(["a1@w1", "a2@w1"]);
    expect(scheduler.admitted("a")).toBe(1);
  });

  it("fails a run that waited past the queue timeout, or its own deadline, and says so", () => {
    vi.useFakeTimers();
    const { scheduler, timedOut, run } = setup({ maxWorkersPerKey: 1, maxRunsPerKey: 1 });
    const queued: boolean[] = [];
    run("a", "a1");
    run("a", "a2", 60_000, (q) => queued.push(q));
    run("a", "a3", 500);
    expect(queued).toEqual([true]);
    vi.advanceTimersByTime(500);
    expect(timedOut).toEqual([
      "a3: the run reached its deadline of 500 ms while it waited in the queue for a sandbox (1 other run of the same key running); nothing of it ran, try again later",
    ]);
    vi.advanceTimersByTime(500);
    expect(timedOut[1]).toMatch(/^a2: the run waited 1000 ms in the queue for a sandbox and did not start/);
    expect(scheduler.queueTimeouts()).toBe(2);
    expect(scheduler.queued()).toBe(0);
  });

  it("tells a queued run when it leaves the queue, and forgets a removed one", () => {
    vi.useFakeTimers();
    const { scheduler, slots, started, timedOut, run } = setup({ maxWorkersPerKey: 1 });
    const queued: boolean[] = [];
    run("a", "a1");
    run("a", "a2", 60_000, (q) => queued.push(q));
    const removed = run("a", "a3");
    expect(scheduler.remove(removed)).toBe(true);
    expect(scheduler.remove(removed)).toBe(false);
    for (const slot of slots) slot.computing.clear();
    scheduler.drain();
    expect(queued).toEqual([true, false]);
    expect(started).toEqual(["a1@w1", "a2@w1"]);
    vi.advanceTimersByTime(5_000);
    expect(timedOut).toEqual([]);
  });

  it("hands back every queued run on takeAll", () => {
    const { scheduler, run } = setup({ maxWorkersPerKey: 1 });
    run("a", "a1");
    run("a", "a2");
    run("b", "b1");
    run("b", "b2");
    expect(
      scheduler
        .takeAll()
        .map((r) => r.name)
        .sort(),
    ).toEqual(["a2", "b2"]);
    expect(scheduler.queued()).toBe(0);
  });
});
