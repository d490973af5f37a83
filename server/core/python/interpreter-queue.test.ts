/**
 * Calls waiting for a Python interpreter: served in order once one can be had, bounded by the
 * start timeout with a message that says why, cancelled by the call's signal, told at once when
 * interpreters cannot start, and the wait's side effect (the paused deadline) ended every way.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createInterpreterQueue, StartFailure } from "./interpreter-queue";

afterEach(() => {
  vi.useRealTimers();
});

function queueOver(available: string[]) {
  return createInterpreterQueue<string>({
    startTimeoutMs: 1_000,
    take: (domain) => (available.length > 0 ? `${available.shift()}:${domain}` : undefined),
    whyNoneReady: () => "all 1 interpreters were busy",
  });
}

describe("interpreter queue", () => {
  it("hands out interpreters in arrival order and ends each wait's side effect", async () => {
    const available: string[] = [];
    const queue = queueOver(available);
    const ended: string[] = [];
    const first = queue.acquire("a", { onWait: () => () => ended.push("a") });
    const second = queue.acquire("b", { onWait: () => () => ended.push("b") });
    available.push("w1", "w2");
    queue.pump();
    expect(await first).toBe("w1:a");
    expect(await second).toBe("w2:b");
    expect(ended).toEqual(["a", "b"]);
    available.push("w3");
    expect(await queue.acquire("c", { onWait: () => () => ended.push("c") })).toBe("w3:c");
    expect(ended).toEqual(["a", "b"]); // served at once: no wait, no side effect
  });

  it("gives up after the start timeout with a StartFailure that says why", async () => {
    vi.useFakeTimers();
    const queue = queueOver([]);
    const waiting = queue.acquire("a");
    vi.advanceTimersByTime(1_000);
    const error = await waiting.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartFailure);
    expect((error as StartFailure).timedOut).toBe(true);
    expect((error as Error).message).toMatch(
      /^no Python interpreter was ready within 1000 ms, so the code did not run \(all 1 interpreters were busy\)/,
    );
  });

  it("leaves the line on cancel, fails everyone on rejectAll, and refuses after close", async () => {
    const queue = queueOver([]);
    const controller = new AbortController();
    const cancelled = queue.acquire("a", { signal: controller.signal });
    const failed = queue.acquire("b");
    controller.abort();
    await expect(cancelled).rejects.toThrow("the call was cancelled");
    queue.rejectAll(new StartFailure("cannot start", false));
    await expect(failed).rejects.toThrow("cannot start");
    const pending = queue.acquire("c");
    queue.close();
    await expect(pending).rejects.toThrow("the python runtime is closed");
    await expect(queue.acquire("d")).rejects.toThrow("the python runtime is closed");
  });
});
