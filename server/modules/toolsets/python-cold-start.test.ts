/**
 * A Python binding's cold start inside an action: the action's deadline is paused while the
 * interpreter loads (the toolset's timeout starts once it is ready), and when the load exceeds its
 * own bound the guest's error says the interpreter did not start in time, not that the toolset
 * timed out.
 */
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../core/actions/engine";
import { builtinModules } from "../../core/capabilities/builtins";
import { createPythonRuntime, type PythonRuntime } from "../../core/python/runtime";
import { testSession } from "../../core/testing/fixtures";
import { createMemoryPorts } from "../../core/testing/memory-ports";
import { readToolsetFolder, type ToolsetBinding, validateToolsetFiles } from "../../core/toolsets";
import { buildToolsetModule } from "./index";

const CALCULATOR = path.resolve(import.meta.dirname, "../../core/python/fixtures/calculator");
const open: { engine: Engine; python: PythonRuntime }[] = [];
const folder = readToolsetFolder(CALCULATOR);
let bindings: ToolsetBinding[] = [];
let parser: PythonRuntime;

beforeAll(async () => {
  // Parsed by a runtime of its own: the runtime each test calls through has never started one.
  parser = createPythonRuntime({ maxWorkers: 1, spareWorkers: 0 });
  const validation = await validateToolsetFiles(folder, { parsePython: parser.parse });
  bindings = (validation.parsed?.bindings ?? []).map((b) => ({ ...b, category: "read" as const }));
  expect(bindings.map((b) => b.name)).toEqual(["compute"]);
}, 120_000);

afterAll(async () => {
  await parser?.close();
});

afterEach(async () => {
  for (const { engine, python } of open.splice(0)) {
    await engine.close();
    await python.close();
  }
});

/** An engine with the plan's calculator (§9) over a Python runtime that has no warm interpreter. */
async function coldSetup(options: { deadlineMs: number; toolsetTimeoutMs: number; startTimeoutMs?: number }) {
  const python = createPythonRuntime({
    maxWorkers: 2,
    spareWorkers: 0,
    ...(options.startTimeoutMs ? { startTimeoutMs: options.startTimeoutMs } : {}),
  });
  const source = folder.files.source ?? "";
  const doc = folder.files.doc ?? "";
  const engine = createEngine({
    ports: createMemoryPorts(),
    instanceId: "python-cold",
    limits: { deadlineMs: options.deadlineMs },
    modules: [
      builtinModules(),
      () => [
        buildToolsetModule({
          name: "calculator",
          description: "Basic arithmetic.",
          version: { language: "python", compiledJs: source, contentHash: "cold1", doc, bindings },
          runtime: async () => ({
            timeoutMs: options.toolsetTimeoutMs,
            allowedHosts: [],
            env: {},
            secrets: {},
          }),
          runtimes: () => ({ python }),
        }),
      ],
    ],
    poolOptions: { workers: 1 },
  });
  open.push({ engine, python });
  expect(python.stats().workers).toBe(0);
  return engine;
}

const ACTION = `
  import { compute } from "toolstore/calculator";
  export default async function () {
    try {
      return await compute({ a: 6, b: 7, op: "multiply" });
    } catch (e) {
      return { caught: e.error, message: e.message };
    }
  }`;

describe("[PYTHON] cold start inside an action", { timeout: 120_000 }, () => {
  it("an action with a 1 s deadline calls a Python binding whose interpreter takes seconds to load", async () => {
    const engine = await coldSetup({ deadlineMs: 1000, toolsetTimeoutMs: 500 });
    const started = performance.now();
    const { envelope } = await engine.run({ code: ACTION, session: testSession({ mode: "auto" }) });
    // The load is what makes the call slow; neither the action's deadline nor the toolset's
    // timeout counted it.
    expect(performance.now() - started).toBeGreaterThan(1000);
    expect(envelope).toMatchObject({
      ok: true,
      result: { result: 42 },
      calls: [{ capability: "calculator.compute", decision: "allow" }],
    });
  });

  it("a load past its own bound: the guest hears that the interpreter did not start, and what to do", async () => {
    const engine = await coldSetup({ deadlineMs: 30_000, toolsetTimeoutMs: 10_000, startTimeoutMs: 100 });
    const { envelope } = await engine.run({ code: ACTION, session: testSession({ mode: "auto" }) });
    expect(envelope.ok).toBe(true);
    const result = envelope.result as { caught: string; message: string };
    expect(result.caught).toBe("timeout");
    expect(result.message).toContain(
      "calculator.compute did not run: no Python interpreter was ready within 100 ms",
    );
    expect(result.message).toContain("retry the call");
    expect(result.message).not.toContain("timed out after 10000 ms");
  });
});
