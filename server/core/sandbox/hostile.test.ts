/**
 * Hostile actions are contained: each case runs through the whole path (static check, pool,
 * run.invoke) and must end with the right envelope error kind; after each one a normal action
 * still succeeds in the same engine.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../actions/engine";
import type { ObservationEnvelope } from "../actions/envelope";
import { builtinModules } from "../capabilities/builtins";
import { createCanaryModule, testSession } from "../testing/fixtures";
import { createMemoryPorts } from "../testing/memory-ports";

type Expected = "ok" | "threw" | "timeout" | "out_of_memory" | "refused";

interface Case {
  group: "loops" | "memory" | "stack" | "promise storms" | "marshalling" | "host" | "huge outputs";
  name: string;
  code: string;
  expect: Expected | Expected[];
  check?: (envelope: ObservationEnvelope) => void;
  deadlineMs?: number;
}

const fast = { deadlineMs: 400 };

const CASES: Case[] = [
  // loops
  {
    group: "loops",
    name: "plain infinite loop",
    code: "export default () => { for (;;) {} }",
    expect: "timeout",
  },
  {
    group: "loops",
    name: "loop at module top level",
    code: "while (true) {}\nexport default () => 1",
    expect: "timeout",
  },
  {
    group: "loops",
    name: "loop inside a promise job",
    code: "export default async () => { Promise.resolve().then(() => { for (;;) {} }); await null; return 1; }",
    expect: "timeout",
  },
  {
    group: "loops",
    name: "loop after an await",
    code: "export default async () => { await null; while (true) {} }",
    expect: "timeout",
  },
  {
    group: "loops",
    name: "loop in try with a looping finally",
    code: "export default () => { try { for (;;) {} } finally { for (;;) {} } }",
    expect: "timeout",
  },
  {
    group: "loops",
    name: "long built-in call (Array.join) that the interrupt handler cannot stop",
    code: 'export default () => new Array(3e7).join("ab").length',
    expect: "timeout",
  },
  {
    group: "loops",
    name: "catastrophic regular expression",
    code: 'export default () => /^(a+)+$/.test("a".repeat(40) + "b")',
    expect: "timeout",
  },
  {
    group: "loops",
    name: "loop in a getter read while the result is serialized",
    code: "export default () => ({ get x() { for (;;) {} } })",
    expect: "timeout",
  },
  // memory
  {
    group: "memory",
    name: "many typed arrays, each under the limit",
    code: "export default () => { const a = []; for (;;) a.push(new Uint8Array(8 << 20)); }",
    expect: "out_of_memory",
  },
  {
    group: "memory",
    name: "many 4 MiB strings",
    code: 'export default () => { const a = []; for (let i = 0; ; i++) a.push("x".repeat(4 << 20) + i); }',
    expect: "out_of_memory",
  },
  {
    group: "memory",
    name: "many small objects",
    code: "export default () => { const a = []; for (let i = 0; ; i++) a.push({ i, s: 'y'.repeat(1000) + i }); }",
    expect: "out_of_memory",
    deadlineMs: 10_000,
  },
  {
    group: "memory",
    name: "string doubling (ropes reach the maximum string length first)",
    code: 'export default () => { let s = "x"; for (;;) s += s; }',
    expect: "threw",
    check: (e) => expect(e.error?.message).toMatch(/string too long/),
  },
  {
    group: "memory",
    name: "one huge ArrayBuffer",
    code: "export default () => new ArrayBuffer(2 ** 31 - 1).byteLength",
    expect: ["out_of_memory", "threw"],
  },
  {
    group: "memory",
    name: "out of memory caught by the guest, which then answers normally",
    code: 'export default () => { let a = []; try { for (;;) a.push(new Uint8Array(8 << 20)); } catch (e) { a = null; return "recovered"; } }',
    expect: ["ok", "out_of_memory"],
  },
  // stack
  {
    group: "stack",
    name: "deep recursion",
    code: "function f(n) { return f(n + 1) + 1; }\nexport default () => f(0)",
    expect: "threw",
    check: (e) => expect(e.error?.message).toMatch(/stack/i),
  },
  {
    group: "stack",
    name: "deeply nested result serialized by JSON.stringify",
    code: "export default () => { let o = {}; for (let i = 0; i < 30000; i++) o = { o }; return o; }",
    expect: "threw",
    check: (e) => expect(e.error?.message).toMatch(/stack/i),
    deadlineMs: 10_000,
  },
  {
    group: "stack",
    name: "JSON.parse parser bomb",
    code: 'export default () => JSON.parse("[".repeat(100000))',
    expect: "threw",
  },
  {
    group: "stack",
    name: "eval parser bomb",
    code: 'export default () => eval("[".repeat(100000))',
    expect: "threw",
  },
  {
    group: "stack",
    name: "Function constructor with deeply nested parentheses",
    code: 'export default () => new Function("return " + "(".repeat(100000) + "1" + ")".repeat(100000))()',
    expect: "threw",
  },
  {
    group: "stack",
    name: "recursive toString",
    code: "export default () => { const o = { toString() { return String(o); } }; return String(o); }",
    expect: "threw",
  },
  {
    group: "stack",
    name: "the action source itself is a parser bomb",
    code: `export default () => ${"[".repeat(50000)}${"]".repeat(50000)}`,
    expect: "refused",
  },
  // promise storms
  {
    group: "promise storms",
    name: "ten million resolved promises",
    code: "export default async () => { for (let i = 0; i < 1e7; i++) Promise.resolve(i).then(() => {}); return 1; }",
    expect: ["timeout", "out_of_memory"],
  },
  {
    group: "promise storms",
    name: "self-rescheduling microtask chain",
    code: "export default async () => { const f = () => Promise.resolve().then(f); f(); await null; return 1; }",
    // A race between the deadline and the run's memory limit: an out-of-memory thrown inside the
    // chain's own job rejects that job's promise, which nobody awaits, so the chain dies quietly
    // and the action's own `return 1` stands. Contained either way.
    expect: ["timeout", "out_of_memory", "ok"],
    check: (e) => {
      if (e.ok) expect(e.result).toBe(1);
    },
  },
  {
    group: "promise storms",
    name: "endless await loop",
    code: "export default async () => { for (;;) await null; }",
    expect: "timeout",
  },
  {
    group: "promise storms",
    name: "a promise that never settles",
    code: "export default async () => { await new Promise(() => {}); }",
    expect: "threw",
    check: (e) => expect(e.error?.message).toMatch(/never settle/),
  },
  {
    group: "promise storms",
    name: "a thousand concurrent capability calls over the call budget",
    code: 'import { read } from "toolstore/canary";\nexport default () => Promise.all(Array.from({ length: 1000 }, (_, i) => read({ n: i })))',
    expect: "threw",
    check: (e) => expect(e.error?.message).toMatch(/limit|budget/),
  },
  // marshalling traps
  {
    group: "marshalling",
    name: "toJSON that throws in the result",
    code: 'export default () => ({ toJSON() { throw new Error("nope"); } })',
    expect: "threw",
  },
  {
    group: "marshalling",
    name: "Proxy result whose ownKeys trap throws",
    code: 'export default () => new Proxy({}, { ownKeys() { throw new Error("trap"); } })',
    expect: "threw",
  },
  {
    group: "marshalling",
    name: "Proxy argument whose get trap loops",
    code: 'import { read } from "toolstore/canary";\nexport default () => read(new Proxy({ value: "a" }, { get() { for (;;) {} } }))',
    expect: "timeout",
  },
  {
    group: "marshalling",
    name: "argument whose toJSON turns it into an array",
    code: 'import { read } from "toolstore/canary";\nexport default () => read({ toJSON() { return [1, 2]; } })',
    expect: "threw",
  },
  {
    group: "marshalling",
    name: "cyclic result",
    code: "export default () => { const o = {}; o.self = o; return o; }",
    expect: "threw",
  },
  {
    group: "marshalling",
    name: "BigInt result",
    code: "export default () => ({ n: 10n })",
    expect: "threw",
  },
  // reaching for the host
  {
    group: "host",
    name: "process, require, fetch, timers, WebAssembly are all absent",
    code: "export default () => [typeof process, typeof require, typeof fetch, typeof setTimeout, typeof WebAssembly, typeof __toolstore_call, typeof __toolstore_env]",
    expect: "ok",
    check: (e) => expect(e.result).toEqual(Array(7).fill("undefined")),
  },
  {
    group: "host",
    name: "Function('return this') is the guest's own global",
    code: "export default () => { const g = Function('return this')(); return [g === globalThis, typeof g.process, typeof g.require]; }",
    expect: "ok",
    check: (e) => expect(e.result).toEqual([true, "undefined", "undefined"]),
  },
  {
    group: "host",
    name: "constructor.constructor escape",
    code: 'export default () => ({}).constructor.constructor("return process")()',
    expect: "threw",
  },
  {
    group: "host",
    name: "static import of a Node module",
    code: 'import fs from "node:fs";\nexport default () => fs.readFileSync("/etc/passwd", "utf8")',
    expect: "refused",
  },
  {
    group: "host",
    name: "dynamic import()",
    code: 'export default async () => (await import("node:fs")).readFileSync("/etc/passwd", "utf8")',
    expect: "refused",
  },
  {
    group: "host",
    name: "dynamic import hidden in eval",
    code: "export default async () => { const m = await eval('import(\"node:fs\")'); return typeof m; }",
    expect: "threw",
  },
  // huge outputs
  {
    group: "huge outputs",
    name: "a 2 MiB result, over the 1 MiB result limit",
    code: 'export default () => "x".repeat(2 << 20)',
    expect: "threw",
    check: (e) => expect(e.error?.message).toMatch(/over the limit/),
  },
  {
    group: "huge outputs",
    name: "a 40 MiB result that cannot even be serialized",
    code: 'export default () => "x".repeat(40 << 20)',
    expect: "out_of_memory",
  },
  {
    group: "huge outputs",
    name: "a flood of console.log",
    code: 'export default () => { for (let i = 0; i < 20000; i++) console.log("line " + i + " " + "z".repeat(100)); return "done"; }',
    expect: "ok",
    check: (e) => {
      const chars = e.logs.reduce((n, l) => n + l.text.length, 0);
      expect(chars).toBeLessThan(70 * 1024);
      expect(e.logs.at(-1)?.text).toMatch(/dropped/);
    },
  },
  {
    group: "huge outputs",
    name: "one 10 MiB log line",
    code: 'export default () => { console.log("y".repeat(10 << 20)); return 1; }',
    expect: "ok",
    check: (e) => expect(e.logs.reduce((n, l) => n + l.text.length, 0)).toBeLessThan(70 * 1024),
  },
  {
    group: "huge outputs",
    name: "a 10 MiB error message",
    code: 'export default () => { throw new Error("e".repeat(10 << 20)); }',
    expect: "threw",
    check: (e) => expect(e.error?.message.length).toBeLessThan(5000),
  },
];

describe("hostile actions are contained", () => {
  let engine: Engine;
  const session = testSession({ mode: "auto" });

  beforeAll(async () => {
    engine = createEngine({
      ports: createMemoryPorts({ keepEvents: false }),
      instanceId: "test",
      modules: [builtinModules(), () => [createCanaryModule()]],
      poolOptions: { workers: 2, watchdogGraceMs: 200 },
    });
    await engine.pool.warm();
  });

  afterAll(async () => {
    await engine.close();
  });

  it("has at least 30 cases in every group", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
    const groups = new Set(CASES.map((c) => c.group));
    expect(groups.size).toBe(7);
  });

  it.each(CASES)("[$group] $name", async (c) => {
    // Short deadlines only where a timeout is the expected answer; elsewhere a loaded CI machine
    // must not turn an out-of-memory or a refusal into a timeout.
    const expectsTimeout = (Array.isArray(c.expect) ? c.expect : [c.expect]).includes("timeout");
    const limits = c.deadlineMs
      ? { deadlineMs: c.deadlineMs }
      : expectsTimeout
        ? fast
        : { deadlineMs: 15_000 };
    const { envelope } = await engine.run({ code: c.code, session, limits });
    const kind = envelope.ok ? "ok" : envelope.error?.kind;
    const allowed = Array.isArray(c.expect) ? c.expect : [c.expect];
    expect(allowed, JSON.stringify(envelope.error ?? envelope.result)?.slice(0, 300)).toContain(kind);
    c.check?.(envelope);

    const after = await engine.run({
      code: 'import { read } from "toolstore/canary";\nexport default async (input) => (await read({ value: input.v })).echo.value',
      input: { v: "still here" },
      session,
    });
    expect(after.envelope).toMatchObject({ ok: true, result: "still here" });
  });
});
