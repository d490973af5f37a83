/**
 * A worker gives dropped QuickJS instances back to the OS while it idles: a burst of runs that
 * share instances and grow them, once over, leaves no memory behind (an idle worker's isolate
 * never collects on its own, and an instance's linear memory is outside its JS heap).
 */
import { afterAll, describe, expect, it } from "vitest";
import { createSandboxPool } from "./pool";

const MiB = 1024 * 1024;
const pool = createSandboxPool({ workers: 1, maxWorkers: 1 });
afterAll(() => pool.close());

const rss = () => process.memoryUsage().rss;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("worker reclaim", () => {
  it("the memory of a burst of runs goes back to the OS within seconds once they end", async () => {
    await pool.warm();
    await pool.runAction({ code: "export default () => 1", modules: {}, onCall: async () => ({ ok: true }) });
    const before = rss();
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    // 48 runs at once (three shared instances), each holding 4 MiB of its own while it waits.
    const runs = Array.from({ length: 48 }, (_, i) =>
      pool.runAction({
        code: `import { wait } from "toolstore/t";
export default async (input) => { const keep = new Uint8Array(4 << 20).fill(input + 1); await wait({}); return keep[7]; }`,
        input: i,
        modules: { t: ["wait"] },
        onCall: async () => {
          await held;
          return { ok: true, value: null };
        },
      }),
    );
    while (pool.stats().parkedJobs + pool.stats().runningJobs < 48) await sleep(20);
    await sleep(300);
    const peak = rss();
    release();
    const results = await Promise.all(runs);
    expect(results.every((r) => r.ok)).toBe(true);
    const grown = peak - before;
    expect(grown).toBeGreaterThan(150 * MiB);
    // Given back: within 5 s, RSS is within a fifth of the burst's growth of where it started.
    const deadline = Date.now() + 5_000;
    while (rss() - before > grown / 5 && Date.now() < deadline) await sleep(100);
    expect(Math.round((rss() - before) / MiB)).toBeLessThanOrEqual(Math.round(grown / 5 / MiB));
  });
});
