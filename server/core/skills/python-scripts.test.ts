/**
 * A skill's `.py` script runs in the Python runtime with a toolset's lockdown: a real skill folder
 * (fixtures/number-summary) read like the skills folder, `toolstore/skills` run through the gate
 * from an action, the result and print() logs back, and the host out of reach.
 */
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../actions/engine";
import { builtinModules } from "../capabilities/builtins";
import { createPythonRuntime, type PythonRuntime } from "../python/runtime";
import { sessionInMode } from "../testing/fixtures";
import { createMemoryPorts, type MemoryPorts } from "../testing/memory-ports";
import {
  createMemorySkillStore,
  createPythonScriptRunner,
  createSkillsModule,
  loadSkillFromFiles,
  readSkillFolder,
} from ".";

const CANARY = `/tmp/toolstore-h16-skill-pwned-${process.pid}`;
let python: PythonRuntime;
let engine: Engine;
let ports: MemoryPorts;

beforeAll(async () => {
  const folder = readSkillFolder(path.resolve(import.meta.dirname, "fixtures/number-summary"));
  if (!folder.ok) throw new Error(JSON.stringify(folder.diagnostics));
  const loaded = loadSkillFromFiles(folder.name, folder.files);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
  python = createPythonRuntime({ maxWorkers: 2, spareWorkers: 1 });
  ports = createMemoryPorts();
  engine = createEngine({
    ports,
    instanceId: "py-skills",
    // Cold interpreter starts pause the action's deadline; this bounds the rest.
    limits: { deadlineMs: 60_000 },
    modules: [
      builtinModules(),
      () => [
        createSkillsModule({
          store: createMemorySkillStore([loaded.skill]),
          python: createPythonScriptRunner({ python, timeoutMs: 10_000 }),
        }),
      ],
    ],
    poolOptions: { workers: 1 },
  });
}, 120_000);

afterAll(async () => {
  await engine?.close();
  await python?.close();
  rmSync(CANARY, { force: true });
});

const auto = sessionInMode("auto");

async function runScript(script: string, input: unknown) {
  const { envelope } = await engine.run({
    session: auto,
    code: `import { run } from "toolstore/skills";
      export default async function () {
        return await run({ name: "number-summary", path: ${JSON.stringify(script)}, input: ${JSON.stringify(input)} });
      }`,
  });
  return envelope;
}

describe("[SKILLS] Python scripts", { timeout: 120_000 }, () => {
  it("run executes scripts/summary.py: main(input) returns JSON, print() is in the logs, the gate records skills.run", async () => {
    const envelope = await runScript("scripts/summary.py", { values: [3, 1, 4, 1, 5, "x", true] });
    expect(envelope).toMatchObject({
      ok: true,
      result: {
        ok: true,
        result: { count: 5, mean: 2.8, median: 3, min: 1, max: 5, skipped: ["x", true] },
        logs: [{ text: expect.stringContaining("summarising 5 values") }],
      },
      calls: [{ capability: "skills.run", category: "execute", decision: "allow" }],
    });
    expect(ports.decisions.all.map((d) => [d.capability, d.decision])).toContainEqual([
      "skills.run",
      "allow",
    ]);
  });

  it("a script's exception comes back as the result's error with its file and line", async () => {
    const envelope = await runScript("scripts/summary.py", { values: [] });
    expect(envelope.ok).toBe(true);
    expect(envelope.result).toMatchObject({
      ok: false,
      error: {
        kind: "threw",
        message: expect.stringMatching(
          /ValueError: no numbers in values \(number-summary\/scripts\/summary\.py:\d+\)/,
        ),
      },
    });
  });

  it("the lockdown holds: no shell command, no network, no host JavaScript, no environment", async () => {
    const envelope = await runScript("scripts/reach-host.py", { canary: CANARY });
    expect(envelope.ok).toBe(true);
    const out = (envelope.result as { result: Record<string, unknown> }).result;
    expect(out.system).toMatch(/PermissionError: subprocesses are not available/);
    expect(out.network).toMatch(/PermissionError: urllib cannot reach the network/);
    expect(out.js_process).toBe("ModuleNotFoundError: No module named 'js'");
    expect(out.environ).toEqual({});
    expect(existsSync(CANARY)).toBe(false);
    // Each script text is its own trust domain, never a toolset's.
    expect(python.stats().domains.filter((d) => d.startsWith("skill:"))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^skill:number-summary\/scripts\/reach-host\.py@/)]),
    );
  });
});
