import { afterEach, describe, expect, it, vi } from "vitest";
import { createHotWindow } from "./hot-window";

afterEach(() => vi.useRealTimers());

describe("the hot window of waits", () => {
  it("parks a wait once its time is up, and not one that left before", () => {
    vi.useFakeTimers();
    const hot = createHotWindow({ parkAfterMs: 3000 });
    const stays = hot.enter();
    const leaves = hot.enter();
    leaves.leave();
    vi.advanceTimersByTime(2999);
    expect(stays.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(stays.signal.aborted).toBe(true);
    expect(leaves.signal.aborted).toBe(false);
    expect(hot.size()).toBe(0);
  });

  it("keeps at most maxHot waits: a burst parks the oldest at once", () => {
    vi.useFakeTimers();
    const hot = createHotWindow({ parkAfterMs: 3000, maxHot: 2 });
    const [first, second, third] = [hot.enter(), hot.enter(), hot.enter()];
    expect(first?.signal.aborted).toBe(true);
    expect(second?.signal.aborted).toBe(false);
    expect(third?.signal.aborted).toBe(false);
    expect(hot.size()).toBe(2);
    // One that leaves makes room: the next does not push anyone out.
    second?.leave();
    const fourth = hot.enter();
    expect(third?.signal.aborted).toBe(false);
    expect(fourth.signal.aborted).toBe(false);
  });

  it("never parks when the window is endless", () => {
    vi.useFakeTimers();
    const hot = createHotWindow({ parkAfterMs: Number.POSITIVE_INFINITY, maxHot: 1 });
    const waits = [hot.enter(), hot.enter()];
    vi.advanceTimersByTime(1e9);
    expect(waits.map((w) => w.signal.aborted)).toEqual([false, false]);
  });
});
