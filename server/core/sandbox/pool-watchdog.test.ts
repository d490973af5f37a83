/**
 * The watchdog's sweep with stand-in workers and a hand-set clock: an overrun past the grace
 * terminates the worker for the job whose pump it was, idle extra workers go, and the runs of a
 * worker that went away are told which of the three ways it went.
 */
import { describe, expect, it } from "vitest";
import { createWatchdog, exitFailure, type WatchedSlot } from "./pool-watchdog";
import { WATCHDOG_ACTION_SLOT, WATCHDOG_BYTES } from "./protocol";

function slot(name: string, state: { deadline?: number; jobId?: number; jobs?: number; idleSince?: number }) {
  const sab = new SharedArrayBuffer(WATCHDOG_BYTES);
  const watched: WatchedSlot & { name: string } = {
    name,
    watchdogDeadline: new Float64Array(sab, 0, 1),
    watchdogIds: new Int32Array(sab),
    jobs: { size: state.jobs ?? 0 },
    isReady: true,
    idleSince: state.idleSince ?? 0,
  };
  watched.watchdogDeadline[0] = state.deadline ?? 0;
  watched.watchdogIds[WATCHDOG_ACTION_SLOT] = state.jobId ?? 0;
  return watched;
}

describe("pool watchdog", () => {
  it("terminates a worker whose pump ran past its deadline and the grace, naming the job", () => {
    let now = 1_000;
    const slots = [
      slot("late", { deadline: 900, jobId: 7, jobs: 1 }),
      slot("busy", { deadline: 2_000, jobs: 1 }),
    ];
    const overran: string[] = [];
    const watchdog = createWatchdog({
      graceMs: 250,
      idleRetireMs: 10_000,
      keepWorkers: 2,
      slots,
      overran: (s, jobId) => overran.push(`${s.name}:${jobId}`),
      idle: () => {},
      now: () => now,
    });
    watchdog.sweep();
    expect(overran).toEqual([]); // 100 ms late: within the grace
    now = 1_151;
    watchdog.sweep();
    expect(overran).toEqual(["late:7"]);
    watchdog.stop();
  });

  it("retires extra workers idle past the limit, never the ones the pool keeps", () => {
    const now = 20_000;
    const slots = [
      slot("old", { idleSince: 1_000 }),
      slot("fresh", { idleSince: 15_000 }),
      slot("working", { jobs: 1 }),
    ];
    const idle: string[] = [];
    const options = {
      graceMs: 250,
      idleRetireMs: 10_000,
      slots,
      overran: () => {},
      idle: (s: (typeof slots)[number]) => idle.push(s.name),
      now: () => now,
    };
    const keepAll = createWatchdog({ ...options, keepWorkers: 3 });
    keepAll.sweep();
    keepAll.stop();
    expect(idle).toEqual([]);
    const keepOne = createWatchdog({ ...options, keepWorkers: 1 });
    keepOne.sweep();
    keepOne.stop();
    expect(idle).toEqual(["old"]);
  });

  it("tells each run of a worker that went away why", () => {
    const job = { id: 3, deadlineMs: 500 };
    expect(exitFailure({ overrunJobId: 3 }, job, 1).error).toEqual({
      kind: "timeout",
      message:
        "the run overran its deadline of 500 ms inside a long built-in call; its sandbox was terminated",
    });
    expect(exitFailure({ overrunJobId: 4 }, job, 1).error).toMatchObject({
      kind: "internal",
      message: expect.stringContaining("another run in it"),
    });
    expect(exitFailure({ lastError: "boom" }, job, 134).error).toEqual({
      kind: "internal",
      message: "the sandbox worker exited unexpectedly (code 134: boom)",
    });
  });
});
