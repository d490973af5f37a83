/**
 * The shipped library modules through the real sandbox pool: YAML, CSV and dates give the right
 * values with no call, no gate decision and no audit row; every library exports exactly what it
 * declares; imports of unknown libraries and exports are refused before anything runs; and a
 * library that reaches for a capability, the network or a host global fails.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../core/actions/engine";
import { builtinModules } from "../../core/capabilities/builtins";
import type { LibraryModule } from "../../core/libraries/types";
import { createSandboxPool, type SandboxPool } from "../../core/sandbox/pool";
import { createCanaryModule, testSession } from "../../core/testing/fixtures";
import { createMemoryPorts, type MemoryPorts } from "../../core/testing/memory-ports";
import { SHIPPED_LIBRARIES } from "./plugin";

let pool: SandboxPool;
beforeAll(async () => {
  pool = createSandboxPool({ workers: 2 });
  await pool.warm();
});
afterAll(() => pool.close());

/** Libraries a careless or hostile package could ship: each tries to leave its sandbox. */
const HOSTILE: LibraryModule[] = [
  {
    name: "grabs-capability",
    description: "imports a capability module",
    builtOn: "test",
    exports: [{ name: "run", description: "", signature: "run(): unknown" }],
    source: () => `import { read } from "toolstore/canary"; export function run() { return read({}); }`,
  },
  {
    name: "grabs-bridge",
    description: "imports the host bridge at call time",
    builtOn: "test",
    exports: [{ name: "run", description: "", signature: "run(): unknown" }],
    source: () =>
      `export async function run() { const b = await import("toolstore:bridge"); return b.call("canary.read", {}, 1); }`,
  },
  {
    name: "looks-around",
    description: "looks for the network and host globals",
    builtOn: "test",
    exports: [{ name: "probe", description: "", signature: "probe(): unknown" }],
    source: () => `export async function probe() {
  const out = {};
  for (const name of ["fetch", "process", "require", "XMLHttpRequest", "WebSocket", "setTimeout", "__toolstore_call", "__toolstore_env"])
    out[name] = typeof globalThis[name];
  try { await fetch("http://127.0.0.1/"); out.fetched = true; } catch (e) { out.fetchError = e.name; }
  try { Function("return process")(); } catch (e) { out.processError = e.name; }
  return out;
}`,
  },
];

let ports: MemoryPorts;
let engine: Engine;
let canary: ReturnType<typeof createCanaryModule>;
beforeEach(() => {
  ports = createMemoryPorts();
  canary = createCanaryModule();
  engine = createEngine({
    ports,
    instanceId: "i1",
    modules: [builtinModules(), () => [canary]],
    libraries: [...SHIPPED_LIBRARIES, ...HOSTILE],
    pool,
  });
});

describe("library modules", () => {
  it("parse YAML and CSV and format a date, with no call, decision or audit row", async () => {
    const { runId, envelope } = await engine.run({
      session: testSession(),
      code: `import { parse as yaml, stringify } from "toolstore/lib/yaml";
import { parse as csv, unparse } from "toolstore/lib/csv";
import { format, addDays, parseISO, differenceInCalendarDays } from "toolstore/lib/dates";
export default async () => {
  const config = yaml("name: demo\\nlimits:\\n  calls: 5\\ntags: [a, b]\\n");
  const table = csv("city,temp\\nOslo,3\\nRome,18\\n", { header: true, dynamicTyping: true, skipEmptyLines: true });
  const due = addDays(parseISO("2026-02-27T12:00:00"), 3);
  return {
    config, rows: table.data, errors: table.errors.length,
    back: unparse(table.data), yaml: stringify({ ok: true }),
    due: format(due, "yyyy-MM-dd EEEE"), days: differenceInCalendarDays(due, parseISO("2026-02-27T12:00:00")),
  };
};`,
    });
    expect(envelope.error).toBeUndefined();
    expect(envelope.result).toEqual({
      config: { name: "demo", limits: { calls: 5 }, tags: ["a", "b"] },
      rows: [
        { city: "Oslo", temp: 3 },
        { city: "Rome", temp: 18 },
      ],
      errors: 0,
      back: "city,temp\r\nOslo,3\r\nRome,18",
      yaml: "ok: true\n",
      due: "2026-03-02 Monday",
      days: 3,
    });
    expect(envelope.calls).toEqual([]);
    await engine.flush();
    expect(ports.decisions.all.filter((d) => d.runId === runId)).toEqual([]);
    expect(ports.events.all.filter((e) => e.type === "gate.decision" || e.type === "call.refused")).toEqual(
      [],
    );
  });

  it("a YAML parse error is a catchable error with its line", async () => {
    const { envelope } = await engine.run({
      session: testSession(),
      code: `import { parse } from "toolstore/lib/yaml";
export default async () => { try { parse("a: [1, 2\\nb: c"); return "parsed"; } catch (e) { return { name: e.name, line: e.linePos?.[0]?.line ?? null }; } };`,
    });
    expect(envelope.result).toMatchObject({ name: "YAMLParseError" });
  });

  it("each shipped library exports exactly what it declares", async () => {
    for (const library of SHIPPED_LIBRARIES) {
      const { envelope } = await engine.run({
        session: testSession(),
        code: `import * as m from "toolstore/lib/${library.name}"; export default async () => Object.keys(m).sort();`,
      });
      expect(envelope.result, library.name).toEqual(library.exports.map((e) => e.name).sort());
    }
  });

  it("refuses an unknown library or export before anything runs, with a hint", async () => {
    const lib = await engine.run({
      session: testSession(),
      code: `import { parse } from "toolstore/lib/yml"; export default async () => parse("a: 1");`,
    });
    expect(lib.envelope.error).toMatchObject({ kind: "refused" });
    expect(lib.envelope.error?.message).toMatch(
      /"toolstore\/lib\/yml" is not mounted.*did you mean "toolstore\/lib\/yaml"/,
    );
    const name = await engine.run({
      session: testSession(),
      code: `import { parseYaml } from "toolstore/lib/yaml"; export default async () => parseYaml("a: 1");`,
    });
    expect(name.envelope.error?.message).toMatch(/has no export "parseYaml"/);
  });

  it("is not a capability: run.invoke does not know it", async () => {
    await expect(
      engine.invoke({ session: testSession(), name: "lib/yaml.parse", args: { text: "a: 1" } }),
    ).rejects.toMatchObject({ code: "CAPABILITY_UNKNOWN" });
  });

  it("a library cannot import a capability module or the host bridge", async () => {
    const imports = await engine.run({
      session: testSession(),
      code: `import { run } from "toolstore/lib/grabs-capability"; export default async () => run();`,
    });
    expect(imports.envelope.ok).toBe(false);
    expect(imports.envelope.error?.message).toMatch(/import of "toolstore\/canary" is not allowed here/);
    const bridge = await engine.run({
      session: testSession(),
      code: `import { run } from "toolstore/lib/grabs-bridge";
export default async () => { try { return await run(); } catch (e) { return String(e.message); } };`,
    });
    expect(bridge.envelope.result).toMatch(/import of "toolstore:bridge" is not allowed here/);
    expect(canary.runs).toEqual([]);
    expect(ports.decisions.all).toEqual([]);
  });

  it("a library finds no network and no host global", async () => {
    const { envelope } = await engine.run({
      session: testSession(),
      code: `import { probe } from "toolstore/lib/looks-around"; export default async () => probe();`,
    });
    expect(envelope.result).toEqual({
      fetch: "undefined",
      process: "undefined",
      require: "undefined",
      XMLHttpRequest: "undefined",
      WebSocket: "undefined",
      setTimeout: "undefined",
      __toolstore_call: "undefined",
      __toolstore_env: "undefined",
      fetchError: "ReferenceError",
      processError: "ReferenceError",
    });
  });
});
