/**
 * A cold start is not the toolset's time: the toolset's timeout starts once an interpreter is
 * ready, the caller's deadline is paused while it waits, and the wait has its own bound whose
 * error says the code never ran. Interpreters that cannot start fail the waiting calls with the
 * reason instead of leaving them to wait.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RunBindingRequest } from "../sandbox/binding-runtime";
import { createPythonRuntime, type PythonRuntime } from "./runtime";

const CODE = `from toolstore.toolset import tool\n\n@tool("read")\ndef double(n: int) -> int:\n    return n * 2\n`;

const opened: PythonRuntime[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((r) => r.close()));
});

function runtime(options: Parameters<typeof createPythonRuntime>[0]): PythonRuntime {
  const r = createPythonRuntime({ spareWorkers: 0, maxWorkers: 1, ...options });
  opened.push(r);
  return r;
}

function request(extra: Partial<RunBindingRequest> = {}): RunBindingRequest {
  return {
    trustDomain: "cold@1",
    code: CODE,
    exportName: "double",
    args: [],
    kwargs: { n: 21 },
    env: {},
    allowedHosts: [],
    timeoutMs: 10_000,
    ...extra,
  };
}

describe("[PYTHON] cold start", { timeout: 120_000 }, () => {
  it("the toolset's timeout starts once the interpreter is ready; the caller's deadline is paused meanwhile", async () => {
    const python = runtime({});
    const pauses: { paused: number; resumed?: number }[] = [];
    const started = performance.now();
    const cold = await python.runBinding(
      request({
        // Far below a cold start (seconds): the call only passes if the load is not counted.
        timeoutMs: 300,
        pauseDeadline: () => {
          const entry: { paused: number; resumed?: number } = { paused: performance.now() };
          pauses.push(entry);
          return () => {
            entry.resumed = performance.now();
          };
        },
      }),
    );
    const elapsed = performance.now() - started;
    expect(cold).toMatchObject({ ok: true, value: 42 });
    expect(elapsed).toBeGreaterThan(300);
    expect(pauses).toHaveLength(1);
    const [pause] = pauses;
    // Resumed before the code ran, and the pause covered most of the cold call.
    expect(pause?.resumed).toBeDefined();
    expect((pause?.resumed ?? 0) - (pause?.paused ?? 0)).toBeGreaterThan(elapsed * 0.5);

    // Warm: the interpreter is there at once, the caller's deadline is never paused.
    const warm = await python.runBinding(
      request({
        timeoutMs: 300,
        pauseDeadline: () => {
          pauses.push({ paused: 0 });
          return () => {};
        },
      }),
    );
    expect(warm).toMatchObject({ ok: true, value: 42 });
    expect(pauses).toHaveLength(1);
  });

  it("a cold start longer than its own bound fails saying the code never ran; the next call gets the warm interpreter", async () => {
    const python = runtime({ startTimeoutMs: 50 });
    let resumed = 0;
    const result = await python.runBinding(request({ pauseDeadline: () => () => resumed++ }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ kind: "timeout", startup: true });
    expect(result.error.message).toContain(
      "no Python interpreter was ready within 50 ms, so the code did not run",
    );
    expect(result.error.message).toContain("cold start");
    expect(result.error.message).toContain("retry the call");
    expect(resumed).toBe(1);

    // The interpreter kept starting; once it is ready a call within the same bound runs.
    await python.warm();
    expect(await python.runBinding(request())).toMatchObject({ ok: true, value: 42 });
  });

  it("interpreters that die while starting fail the waiting call with the reason, without waiting out the bound", async () => {
    // A 2 MiB JavaScript heap cannot even load Pyodide: every worker dies while starting.
    const python = runtime({ workerHeapMb: 2, startTimeoutMs: 100_000 });
    const started = performance.now();
    const result = await python.runBinding(request());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ kind: "internal", startup: true });
    expect(result.error.message).toContain("the Python interpreter fails to start (3 tries)");
    expect(performance.now() - started).toBeLessThan(100_000);
  });
});

describe("[PYTHON] idle interpreters", { timeout: 120_000 }, () => {
  it("a worker left by parsing, or bound to a toolset, is retired once idle; the next call starts a new one", async () => {
    const python = runtime({ idleRetireMs: 300 });
    await python.parse(CODE);
    expect(python.stats().workers).toBe(1);
    await expect.poll(() => python.stats().workers, { timeout: 30_000, interval: 100 }).toBe(0);
    const r = await python.runBinding(request());
    expect(r).toMatchObject({ ok: true, value: 42 });
    await expect.poll(() => python.stats().workers, { timeout: 30_000, interval: 100 }).toBe(0);
    expect(python.stats().retired).toBe(2);
  });
});
