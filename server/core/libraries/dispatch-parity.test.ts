/**
 * The two dispatchers, in the style of the gate-parity test: one canary per module kind, driven
 * through the real static check, sandbox and dispatch. A capability call goes through run.invoke
 * (its decision is recorded, the same transcript as a direct invoke); a library call never
 * reaches the host at all — not even when the action hands it a capability function, whose
 * calls still go through the gate.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../actions/engine";
import { createSandboxPool, type SandboxPool } from "../sandbox/pool";
import { createCanaryModule, testSession } from "../testing/fixtures";
import { createMemoryPorts, type MemoryPorts } from "../testing/memory-ports";
import type { LibraryModule } from "./types";

/** The library canary: pure, and one export that calls whatever function it is given. */
const canaryLibrary: LibraryModule = {
  name: "canary",
  description: "Library canary.",
  builtOn: "test",
  exports: [
    { name: "double", description: "", signature: "double(n: number): number" },
    { name: "apply", description: "", signature: "apply(fn: (x: unknown) => unknown, x: unknown): unknown" },
  ],
  source: () => "export function double(n) { return n * 2; }\nexport function apply(fn, x) { return fn(x); }",
};

let pool: SandboxPool;
beforeAll(async () => {
  pool = createSandboxPool({ workers: 1 });
  await pool.warm();
});
afterAll(() => pool.close());

let ports: MemoryPorts;
let engine: Engine;
let invoked: string[];
beforeEach(() => {
  ports = createMemoryPorts();
  const canary = createCanaryModule();
  invoked = [];
  engine = createEngine({
    ports,
    instanceId: "i1",
    // The capability canary counts every impl run: only run.invoke runs impls.
    modules: [
      () => [
        {
          ...canary,
          exports: canary.exports.map((e) => ({
            ...e,
            impl: (run, args, site) => {
              invoked.push(e.spec.name);
              return e.impl(run, args, site);
            },
          })),
        },
      ],
    ],
    libraries: [canaryLibrary],
    pool,
  });
});

const transcript = (m: MemoryPorts) => m.decisions.all.map((d) => [d.capability, d.decision]);

describe("dispatch parity: capability modules vs library modules", () => {
  it("a capability call goes through run.invoke, in the sandbox as directly", async () => {
    const { envelope } = await engine.run({
      session: testSession(),
      code: `import { read } from "toolstore/canary"; export default async () => (await read({ value: "x" })).category;`,
    });
    expect(envelope.result).toBe("read");
    expect(envelope.calls.map((c) => [c.capability, c.decision])).toEqual([["canary.read", "allow"]]);
    await engine.flush();
    const viaSandbox = transcript(ports);
    ports.decisions.all.length = 0;
    await engine.invoke({ session: testSession(), name: "canary.read", args: { value: "x" } });
    await engine.flush();
    expect(transcript(ports)).toEqual(viaSandbox);
    expect(invoked).toEqual(["canary.read", "canary.read"]);
  });

  it("a library call never reaches the host: no call, no decision, no event", async () => {
    const { envelope } = await engine.run({
      session: testSession(),
      code: `import { double } from "toolstore/lib/canary";
export default async () => { let n = 1; for (let i = 0; i < 10; i++) n = double(n); return n; };`,
    });
    expect(envelope.result).toBe(1024);
    expect(envelope.calls).toEqual([]);
    await engine.flush();
    expect(ports.decisions.all).toEqual([]);
    expect(ports.events.all.map((e) => e.type)).toEqual(["run.started", "run.finished"]);
    expect(invoked).toEqual([]);
    await expect(
      engine.invoke({ session: testSession(), name: "lib/canary.double", args: {} }),
    ).rejects.toMatchObject({ code: "CAPABILITY_UNKNOWN" });
  });

  it("a capability handed to a library still goes through the gate, and only once per call", async () => {
    const { envelope } = await engine.run({
      session: testSession({ mode: "plan" }),
      code: `import { apply } from "toolstore/lib/canary";
import { read, write } from "toolstore/canary";
export default async () => {
  const r = await apply(read, { value: "via library" });
  const w = await apply(write, { value: "planned" });
  return [r.category, w.planned, w.capability];
};`,
    });
    // Plan mode is a dry run: the write does not run and the library gets the planned marker.
    expect(envelope.result).toEqual(["read", true, "canary.write"]);
    expect(envelope.calls.map((c) => [c.capability, c.decision])).toEqual([
      ["canary.read", "allow"],
      ["canary.write", "blocked"],
    ]);
    expect(invoked).toEqual(["canary.read"]);
  });
});
