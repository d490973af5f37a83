/**
 * Fair share in the sandbox pool, proven by the order of events the pool itself produces (who was
 * queued, who finished first), never by a wall-clock threshold: one key's runaway loops do not
 * delay another key's run, a key's cap queues its own runs (and times them out clearly), an
 * approval wait holds no slot, and a watchdog termination only touches the key that overran.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createSandboxPool, type HostCallReply, type SandboxPool } from "./pool";
import { runStuckAction } from "./pool-testing";

const LOOP = "export default async function () { while (true) {} }";
const TRIVIAL = "export default async function () { return 1; }";
const noCalls = async (): Promise<HostCallReply> => ({ ok: true });

let pool: SandboxPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

function deferred<T = void>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("sandbox pool fair share", () => {
  it("answers another key's run while one key's infinite loops hold their share", async () => {
    pool = createSandboxPool({ workers: 2, maxWorkersPerKey: 1, watchdogGraceMs: 150 });
    await pool.warm();
    const events: string[] = [];
    const queued: string[] = [];
    const loops = Array.from({ length: 3 }, (_, i) =>
      (pool as SandboxPool)
        .runAction({
          code: LOOP,
          modules: {},
          limits: { deadlineMs: 2_000 },
          onCall: noCalls,
          fairnessKey: "loops",
          onQueued: (q) => {
            if (q) queued.push(`loop${i}`);
          },
        })
        .then((r) => {
          events.push(`loop${i}:${r.error?.kind}`);
          return r;
        }),
    );
    const other = await pool.runAction({
      code: TRIVIAL,
      modules: {},
      onCall: noCalls,
      fairnessKey: "other",
      onQueued: (q) => {
        if (q) queued.push("other");
      },
    });
    events.push("other:ok");
    expect(other).toMatchObject({ ok: true, resultJson: "1" });
    const results = await Promise.all(loops);
    // The other key was answered before any loop ended, and was never queued behind them.
    expect(events[0]).toBe("other:ok");
    expect(queued).not.toContain("other");
    // The loops key held one worker (its cap): its later loops waited in its own queue.
    expect(queued).toEqual(["loop1", "loop2"]);
    for (const r of results) expect(r.error?.kind).toBe("timeout");
    // A deadline runs from submission: the queued loops end at theirs too, saying the wait was the
    // queue's (they never ran), rather than each getting a full deadline after the one before.
    expect([...events.slice(1)].sort()).toEqual(["loop0:timeout", "loop1:timeout", "loop2:timeout"]);
    for (const r of results.slice(1)) expect(r.error?.message).toMatch(/in the queue for a sandbox/);
  }, 60_000);

  it("queues a key's runs past its cap, shows them as queued, and fails them clearly after the queue timeout", async () => {
    pool = createSandboxPool({ workers: 1, maxRunsPerKey: 1, queueTimeoutMs: 200 });
    const marks: boolean[] = [];
    const loop = pool.runAction({
      code: LOOP,
      modules: {},
      limits: { deadlineMs: 1_500 },
      onCall: noCalls,
      fairnessKey: "k",
    });
    const waiting = await pool.runAction({
      code: TRIVIAL,
      modules: {},
      onCall: noCalls,
      fairnessKey: "k",
      onQueued: (q) => marks.push(q),
    });
    expect(marks).toEqual([true]);
    expect(waiting.ok).toBe(false);
    expect(waiting.error?.kind).toBe("timeout");
    expect(waiting.error?.message).toMatch(/waited 200 ms in the queue.*nothing of it ran/);
    expect(pool.stats().queueTimeouts).toBe(1);
    expect((await loop).error?.kind).toBe("timeout");
  }, 30_000);

  it("does not count a run waiting for a human against its key's cap", async () => {
    pool = createSandboxPool({ workers: 1, maxRunsPerKey: 1 });
    const approval = deferred<HostCallReply>();
    const parkedAsked = deferred();
    const parked = pool.runAction({
      code: `import { ask } from "toolstore/t";
export default async function () { return await ask({}); }`,
      modules: { t: ["ask"] },
      fairnessKey: "k",
      onCall: async (_name, _json, control) => {
        const resume = control.suspendClock();
        parkedAsked.resolve();
        const reply = await approval.promise;
        resume();
        return reply;
      },
    });
    await parkedAsked.promise;
    expect(pool.stats().parkedJobs).toBe(1);
    const marks: boolean[] = [];
    const next = await pool.runAction({
      code: TRIVIAL,
      modules: {},
      onCall: noCalls,
      fairnessKey: "k",
      onQueued: (q) => marks.push(q),
    });
    expect(next).toMatchObject({ ok: true, resultJson: "1" });
    expect(marks).toEqual([]);
    approval.resolve({ ok: true, value: "approved" });
    expect(await parked).toMatchObject({ ok: true, resultJson: '"approved"' });
  }, 30_000);

  it("never takes down another key's run when the watchdog terminates a worker", async () => {
    pool = createSandboxPool({ workers: 2, watchdogGraceMs: 150 });
    const reply = deferred<HostCallReply>();
    const called = deferred();
    const bystander = pool.runAction({
      code: `import { wait } from "toolstore/t";
export default async function () { return await wait({}); }`,
      modules: { t: ["wait"] },
      fairnessKey: "bystander",
      onCall: async () => {
        called.resolve();
        return reply.promise;
      },
    });
    await called.promise;
    expect(await runStuckAction(pool, "runaway")).toEqual({ kind: "timeout", replaced: 1 });
    reply.resolve({ ok: true, value: 7 });
    expect(await bystander).toMatchObject({ ok: true, resultJson: "7" });
  }, 30_000);
});
