import { getHeapStatistics } from "node:v8";
import { describe, expect, it } from "vitest";
import { startIdleGc } from "./idle-gc";

describe("idle GC", () => {
  it("collects a burst's garbage once the process is quiet, and never while it is busy", async () => {
    const collections: [number, number][] = [];
    let trims = 0;
    const idle = startIdleGc({
      everyMs: 100,
      quietChecks: 2,
      trim: () => trims++,
      trimAfterMs: 50,
      onCollect: (before, after) => collections.push([before, after]),
    });
    try {
      // A burst: 200 MiB of objects that live long enough to reach the old generation, then die.
      let kept: unknown[] = [];
      for (let i = 0; i < 4; i++) {
        kept.push(Array.from({ length: 400_000 }, (_, j) => ({ j, s: `item ${j}` })));
        // Busy: the event loop is blocked through the checks that come due meanwhile.
        const until = Date.now() + 150;
        while (Date.now() < until) kept.push({ busy: true });
        await new Promise((r) => setImmediate(r));
      }
      expect(collections).toEqual([]);
      expect(trims).toBe(0);
      const before = getHeapStatistics().used_heap_size;
      kept = [];
      // Quiet: the next check that finds an idle interval collects, once.
      await new Promise((r) => setTimeout(r, 600));
      expect(collections.length).toBe(1);
      const [seen, left] = collections[0] as [number, number];
      expect(seen).toBeGreaterThanOrEqual(before * 0.9);
      expect(left).toBeLessThan(seen / 2);
      await new Promise((r) => setTimeout(r, 400));
      expect(collections.length).toBe(1);
      // The freed native memory went back to the system after the collection (malloc-trim.ts).
      expect(trims).toBe(1);
    } finally {
      idle.stop();
    }
  });
});
