/**
 * A worker gives dropped QuickJS instances back to the OS while it idles: a burst of runs that
 * share instances and grow them, once over, leaves no memory behind (an idle worker's isolate
 * never collects on its own, and an instance's linear memory is outside its JS heap).
 */
import { afterAll, describe, expect, it } from "vitest";
import { createSandboxPool } from "./pool";
import { collectWhenQuiet, quietJudge } from "./worker-reclaim";

const MiB = 1024 * 1024;
const pool = createSandboxPool({ workers: 1, maxWorkers: 1 });
const kept = createSandboxPool({ workers: 1, maxWorkers: 1, idleModuleMs: 1_000 });
afterAll(() => Promise.all([pool.close(), kept.close()]));

const rss = () => process.memoryUsage().rss;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `n` runs at once on `target`, each holding `mib` MiB of its own until they are all running. */
async function burst(target: typeof pool, n: number, mib: number) {
  let release: () => void = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  const runs = Array.from({ length: n }, (_, i) =>
    target.runAction({
      code: `import { wait } from "toolstore/t";
export default async (input) => { const keep = new Uint8Array(${mib} << 20).fill(input + 1); await wait({}); return keep[7]; }`,
      input: i,
      modules: { t: ["wait"] },
      onCall: async () => {
        await held;
        return { ok: true, value: null };
      },
    }),
  );
  while (target.stats().parkedJobs + target.stats().runningJobs < n) await sleep(20);
  await sleep(300);
  const peak = rss();
  release();
  const results = await Promise.all(runs);
  expect(results.every((r) => r.ok)).toBe(true);
  return peak;
}

describe("worker reclaim", () => {
  it("the memory of a burst of runs goes back to the OS within seconds once they end", async () => {
    await pool.warm();
    await pool.runAction({ code: "export default () => 1", modules: {}, onCall: async () => ({ ok: true }) });
    const before = rss();
    // 48 runs at once (three shared instances), each holding 4 MiB of its own while it waits: the
    // instances grow past the size at which they are dropped once empty.
    const grown = (await burst(pool, 48, 4)) - before;
    expect(grown).toBeGreaterThan(150 * MiB);
    // Given back: within 5 s, RSS is within a fifth of the burst's growth of where it started.
    const deadline = Date.now() + 5_000;
    while (rss() - before > grown / 5 && Date.now() < deadline) await sleep(100);
    expect(Math.round((rss() - before) / MiB)).toBeLessThanOrEqual(Math.round(grown / 5 / MiB));
  });

  it("idle instances beyond one go once unused a while, with the memory a burst grew them to", async () => {
    await kept.warm();
    await kept.runAction({ code: "export default () => 1", modules: {}, onCall: async () => ({ ok: true }) });
    const before = rss();
    // 48 runs at once in three instances, each instance grown by 16 MiB: under the size at which
    // an instance is dropped at once, so all three are kept warm when the burst ends.
    const grown = (await burst(kept, 48, 1)) - before;
    expect(grown).toBeGreaterThan(40 * MiB);
    await sleep(300);
    const ended = rss();
    expect(ended - before).toBeGreaterThan(grown / 2);
    // Once they have been idle for idleModuleMs, two of them go (and a collection frees them).
    const deadline = Date.now() + 10_000;
    while (rss() - before > grown / 3 && Date.now() < deadline) await sleep(100);
    expect(Math.round((rss() - before) / MiB)).toBeLessThanOrEqual(Math.round(grown / 3 / MiB));
    // What stays serves the next run.
    expect(
      await kept.runAction({
        code: "export default () => 2",
        modules: {},
        onCall: async () => ({ ok: true }),
      }),
    ).toMatchObject({ ok: true, resultJson: "2" });
  });
});

describe("collect when quiet", () => {
  /** Blocks this thread's event loop for `ms`, in slices, so the watch's looks still come due. */
  async function busyFor(ms: number) {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const slice = Date.now() + 40;
      while (Date.now() < slice) {}
      await new Promise((r) => setImmediate(r));
    }
  }

  it("decides: once per burst after `quietChecks` quiet looks, never while busy or collecting", () => {
    const judge = quietJudge({ quietChecks: 3 });
    const never = () => false;
    const looks = (pattern: string) => [...pattern].map((c) => judge.look(c === "B", never));
    // Quiet from the start, and nothing due: nothing to give back.
    expect(looks("qqqqq")).toEqual([false, false, false, false, false]);
    // A burst, then quiet: the third quiet look collects.
    expect(looks("BBqqq")).toEqual([false, false, false, false, true]);
    // While that collection runs, no other one starts.
    expect(looks("qqq")).toEqual([false, false, false]);
    judge.collected();
    // Still quiet afterwards: once per burst.
    expect(looks("qqqqqq")).toEqual([false, false, false, false, false, false]);
    // A busy look between quiet ones starts the count over.
    expect(looks("BqqBqqq")).toEqual([false, false, false, false, false, false, true]);
  });

  it("decides: while quiet it collects whenever `due` says so, even with no burst", () => {
    const judge = quietJudge({ quietChecks: 2 });
    let due = false;
    expect([judge.look(false, () => due), judge.look(false, () => due)]).toEqual([false, false]);
    due = true;
    expect(judge.look(true, () => due)).toBe(false);
    expect([judge.look(false, () => due), judge.look(false, () => due)]).toEqual([false, true]);
    judge.collected();
    due = false;
    expect([judge.look(false, () => due), judge.look(false, () => due)]).toEqual([false, false]);
  });

  it("on the real clock, never collects while the thread is busy and collects once it is quiet", async () => {
    let collections = 0;
    const watch = collectWhenQuiet({ everyMs: 50, idleBelow: 0.3, quietChecks: 3 }, async () => {
      collections++;
    });
    try {
      await sleep(100);
      const before = collections;
      // A busy thread's event loop is fully used at every look: no collection can start.
      await busyFor(400);
      expect(collections).toBe(before);
      // A loaded machine may look late: up to 10 s.
      await expect.poll(() => collections, { timeout: 10_000, interval: 20 }).toBeGreaterThan(before);
    } finally {
      watch.stop();
    }
  });
});
