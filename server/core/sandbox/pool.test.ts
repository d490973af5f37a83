/**
 * The pool's own contract: toolset bindings (env, fetch with an allowlist, redaction, timeout),
 * the watchdog that replaces an overrunning worker, and concurrency.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxPool, type SandboxPool } from "./pool";
import { runStuckAction } from "./pool-testing";

let pool: SandboxPool;
let server: Server;
let origin: string;

beforeAll(async () => {
  pool = createSandboxPool({ workers: 2, watchdogGraceMs: 150 });
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "x-echo": "yes" });
      res.end(
        JSON.stringify({ method: req.method, url: req.url, auth: req.headers.authorization ?? null, body }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await pool.close();
  await new Promise<void>((r) => server.close(() => r()));
});

const binding = (
  code: string,
  exportName: string,
  args: unknown[],
  extra: Partial<Parameters<SandboxPool["runBinding"]>[0]> = {},
) => pool.runBinding({ code, exportName, args, env: {}, allowedHosts: [], timeoutMs: 2_000, ...extra });

describe("runBinding", () => {
  it("gives every call fresh module state and globals, while a warm context serves the same code and env", async () => {
    const code = `let calls = 0;
export function count() { calls += 1; console.log("call", calls); return [calls, fetch.name, [].extra ?? null, [1].map((x) => x)[0], Math.max(1, 2)]; }
export function addGlobal() { globalThis.leak = 1; }
export function addToBuiltIn() { Array.prototype.extra = "patched"; }
export function replaceGlobal() { globalThis.fetch = function stale() {}; return fetch.name; }
export function replaceMethod() { Array.prototype.map = function stale() { return "stale"; }; return [1].map((x) => x); }
export function replaceStatic() { Math.max = () => 99; }
export function ownName() { const e = new Error("x"); e.name = "Mine"; e.toString = () => "own"; return [e.name, String(e)]; }
export function ownArrayMethod() { const a = [1]; a.map = () => "own"; const o = { toString: () => "obj" }; o.valueOf = () => 7; return [a.map(), String(o), +o]; }
export function replaceStringMethod() { String.prototype.trim = function stale() { return "stale"; }; }
export function overrideMapMethod() { const m = new Map(); m.get = () => "own"; }
export function deleteGlobal() { delete globalThis.fetch; }
export function getterOnGlobal() { Object.defineProperty(globalThis, "fetch", { get() { while (true) {} } }); }
export function replaceConsole() { console.log = () => {}; return "replaced"; }
export function spin() { calls += 1; while (true) {} }`;
    // One worker, so every call lands where the module was evaluated.
    const single = createSandboxPool({ workers: 1, maxWorkers: 1 });
    const binding = (exportName: string, A: string, timeoutMs = 2_000) =>
      single.runBinding({ code, exportName, args: [], env: { A }, allowedHosts: [], timeoutMs });
    const warm = () => single.stats().bindingsWarm;
    const fresh = { ok: true, value: [1, "fetch", null, 1, 2] };
    try {
      // Sequential calls: the second is served warm, and starts from the module's top level again.
      expect(await binding("count", "1")).toMatchObject(fresh);
      expect(await binding("count", "1")).toMatchObject({
        ...fresh,
        logs: [{ level: "log", text: "call 1" }],
      });
      expect(warm()).toBe(1);
      // Another environment is another context.
      expect(await binding("count", "2")).toMatchObject(fresh);
      expect(warm()).toBe(1);
      // No global, and nothing on a built-in, can be added.
      const added = await binding("addGlobal", "1");
      expect(added).toMatchObject({ ok: false, error: { kind: "threw" } });
      expect(added.ok ? "" : added.error.message).toMatch(/not extensible/);
      expect(await binding("addToBuiltIn", "1")).toMatchObject({ ok: false, error: { kind: "threw" } });
      expect(await binding("count", "1")).toMatchObject(fresh);
      // A call that replaced a global does not leave its context for the next one.
      expect(await binding("replaceGlobal", "1")).toMatchObject({ ok: true, value: "stale" });
      expect(await binding("count", "1")).toMatchObject(fresh);
      // Nor does one that replaced a prototype's method in place; a built-in's static cannot be.
      expect(await binding("replaceMethod", "1")).toMatchObject({ ok: true, value: "stale" });
      expect(await binding("count", "1")).toMatchObject(fresh);
      expect(await binding("replaceStatic", "1")).toMatchObject({ ok: false, error: { kind: "threw" } });
      // An instance still sets its own name and toString over the prototype's, and an array or a
      // plain object its own method; the other prototypes' methods are read-only.
      expect(await binding("ownName", "1")).toMatchObject({ ok: true, value: ["Mine", "own"] });
      expect(await binding("ownArrayMethod", "1")).toMatchObject({ ok: true, value: ["own", "obj", 7] });
      for (const name of ["replaceStringMethod", "overrideMapMethod"]) {
        const refused = await binding(name, "1");
        expect(refused).toMatchObject({ ok: false, error: { kind: "threw" } });
        expect(refused.ok ? "" : refused.error.message).toMatch(/read-only|not writable/);
      }
      expect(await binding("count", "1")).toMatchObject({ ...fresh, value: [1, "fetch", null, 1, 2] });
      // No global can be deleted, or turned into a getter (which the check would run).
      expect(await binding("deleteGlobal", "1")).toMatchObject({ ok: false, error: { kind: "threw" } });
      expect(await binding("getterOnGlobal", "1")).toMatchObject({ ok: false, error: { kind: "threw" } });
      // A replaced console method: the call's result stands, the next call gets the real one.
      expect(await binding("replaceConsole", "1")).toMatchObject({ ok: true, value: "replaced" });
      expect(await binding("count", "1")).toMatchObject({
        ...fresh,
        logs: [{ level: "log", text: "call 1" }],
      });
      // A run that ended abnormally does not leave its context behind.
      const spun = await binding("spin", "3", 300);
      expect(spun).toMatchObject({ ok: false, error: { kind: "timeout" } });
      expect(await binding("count", "3")).toMatchObject(fresh);
      // And a clean call keeps serving warm.
      const before = warm();
      expect(await binding("count", "3")).toMatchObject(fresh);
      expect(warm()).toBe(before + 1);
    } finally {
      await single.close();
    }
  });

  it("sends a toolset's code to a worker once, then names it by id; other code of the same size is other code", async () => {
    const padding = `// ${"x".repeat(2_000)}`;
    const codeOf = (letter: string) => `${padding}\nexport function which() { return "${letter}"; }`;
    const single = createSandboxPool({ workers: 1, maxWorkers: 1 });
    const call = (letter: string, A = "1") =>
      single.runBinding({
        code: codeOf(letter),
        exportName: "which",
        args: [],
        env: { A },
        allowedHosts: [],
        timeoutMs: 2_000,
      });
    try {
      const values = [];
      for (const [letter, A] of [
        ["a", "1"],
        ["b", "1"],
        ["a", "2"],
        ["a", "1"],
        ["b", "2"],
      ] as const) {
        values.push((await call(letter, A)) as { value?: unknown });
      }
      expect(values.map((v) => v.value)).toEqual(["a", "b", "a", "a", "b"]);
      // Two codes went to the one worker, once each.
      expect(single.stats().bindingCodeSent).toBe(2);
    } finally {
      await single.close();
    }
  });

  it("calls the export with positional arguments and returns its value", async () => {
    const r = await binding("export function add(a, b = 10) { return a + b; }", "add", [1]);
    expect(r).toMatchObject({ ok: true, value: 11 });
  });

  it("injects a frozen env", async () => {
    const r = await binding(
      'export function f() { "use strict"; try { env.KEY = "x"; } catch (e) { return [env.KEY, e.name, Object.isFrozen(env)]; } }',
      "f",
      [],
      { env: { KEY: "value" } },
    );
    expect(r).toMatchObject({ ok: true, value: ["value", "TypeError", true] });
  });

  it("fetches from an allowed host through the host", async () => {
    const r = await binding(
      `export async function call(url) {
  const res = await fetch(url, { method: "POST", headers: { Authorization: "Bearer " + env.TOKEN }, body: JSON.stringify({ a: 1 }) });
  return { status: res.status, ok: res.ok, echo: res.headers.get("X-Echo"), json: await res.json() };
}`,
      "call",
      [`${origin}/hook`],
      { env: { TOKEN: "s3cret-token" }, allowedHosts: ["127.0.0.1"] },
    );
    expect(r).toMatchObject({
      ok: true,
      value: {
        status: 200,
        ok: true,
        echo: "yes",
        json: { method: "POST", url: "/hook", auth: "Bearer s3cret-token" },
      },
    });
  });

  it("refuses hosts outside the allowlist before the callback runs", async () => {
    let called = false;
    const r = await binding(
      "export async function f(url) { return (await fetch(url)).status; }",
      "f",
      ["http://example.com/"],
      {
        allowedHosts: ["127.0.0.1"],
        fetch: async () => {
          called = true;
          return { status: 200, statusText: "", url: "", headers: {}, body: "" };
        },
      },
    );
    expect(r).toMatchObject({
      ok: false,
      error: { kind: "threw", message: expect.stringMatching(/host not allowed/) },
    });
    expect(called).toBe(false);
  });

  it("redacts secrets from the value, the error and the logs", async () => {
    const r = await binding(
      'export function leak() { console.log("token is", env.T); return "value " + env.T; }',
      "leak",
      [],
      { env: { T: "abcd-secret" }, redact: ["abcd-secret"] },
    );
    expect(JSON.stringify(r)).not.toContain("abcd-secret");
    const e = await binding('export function leak() { throw new Error("bad " + env.T); }', "leak", [], {
      env: { T: "abcd-secret" },
      redact: ["abcd-secret"],
    });
    expect(e).toMatchObject({ ok: false, error: { kind: "threw", message: "bad ***" } });
  });

  it("enforces its own timeout", async () => {
    const r = await binding("export function spin() { for (;;) {} }", "spin", [], { timeoutMs: 200 });
    expect(r).toMatchObject({ ok: false, error: { kind: "timeout" } });
  });

  it("reports a missing export", async () => {
    const r = await binding("export function a() {}", "b", []);
    expect(r).toMatchObject({
      ok: false,
      error: { kind: "threw", message: expect.stringMatching(/no exported function b/) },
    });
  });
});

/**
 * Starts `n` runs (input 0..n-1) whose `body` awaits `wait` from "toolstore/t", a host call that
 * answers once `release()` is called, and gives them time to park.
 */
async function parkRuns(target: SandboxPool, n: number, body: string) {
  let release: () => void = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  const runs = Array.from({ length: n }, (_, i) =>
    target.runAction({
      code: `import { wait } from "toolstore/t";\nexport default async (input) => { ${body} }`,
      input: i,
      modules: { t: ["wait"] },
      onCall: async () => {
        await held;
        return { ok: true, value: null };
      },
    }),
  );
  await new Promise((r) => setTimeout(r, 200));
  return { runs, release: () => release() };
}

describe("pool", () => {
  const noCalls = async () => ({ ok: true as const });

  it("terminates and replaces a worker stuck in a long built-in call", async () => {
    expect(await runStuckAction(pool)).toEqual({ kind: "timeout", replaced: 1 });
    const after = await pool.runAction({ code: "export default () => 42", modules: {}, onCall: noCalls });
    expect(after).toMatchObject({ ok: true, resultJson: "42" });
  });

  it("starts an action in a spare context made ahead, untouched by any action, with the action's own limits", async () => {
    const single = createSandboxPool({ workers: 1, maxWorkers: 1 });
    const calls = async () => ({ ok: true as const, value: null });
    const settle = () => new Promise((r) => setTimeout(r, 50));
    const run = (code: string, extra: Partial<Parameters<SandboxPool["runAction"]>[0]> = {}) =>
      single.runAction({ code, modules: { t: ["f"] }, onCall: calls, ...extra });
    const probe = `import { f } from "toolstore/t";
export default async () => {
  const seen = [typeof globalThis.mark, typeof globalThis.__toolstore_call, typeof globalThis.__toolstore_now, Date.now(), new Date().getTime()];
  globalThis.mark = 1;
  console.log("x".repeat(50));
  await f({});
  await f({});
  return seen;
}`;
    try {
      // The first action of a worker makes its own runtime; the spare is made once it is done.
      const first = await run(probe, { nondet: { seed: "01", clock: [1000, 2000] } });
      expect(first).toMatchObject({
        ok: true,
        resultJson: '["undefined","undefined","undefined",1000,2000]',
      });
      expect(first.spare).toBeUndefined();
      await settle();
      // The next starts in the spare: nothing of the first is there, the host's globals are hidden,
      // its replayed clock is its own, and so are its call and log limits.
      const second = await run(probe, {
        nondet: { seed: "02", clock: [3000, 4000] },
        limits: { maxCalls: 1, logBytes: 10 },
      });
      expect(second.spare).toBe(true);
      expect(second).toMatchObject({ ok: false, error: { kind: "threw" } });
      expect(second.error?.message).toMatch(/limit of 1 capability calls per run reached/);
      expect(second.logs).toEqual([{ level: "log", text: "x".repeat(10) }]);
      await settle();
      const third = await run(probe, { nondet: { seed: "03", clock: [5000, 6000] } });
      expect(third).toMatchObject({
        ok: true,
        spare: true,
        resultJson: '["undefined","undefined","undefined",5000,6000]',
      });
      await settle();
      // Another memory limit is another instance: the spare is dropped, and the next one fits it.
      const bigger = { memoryBytes: 96 * 1024 * 1024 };
      const other = await run("export default () => 1", { limits: bigger });
      expect(other).toMatchObject({ ok: true, resultJson: "1" });
      expect(other.spare).toBeUndefined();
      await settle();
      expect(await run("export default () => 2", { limits: bigger })).toMatchObject({
        ok: true,
        spare: true,
      });
      expect(single.stats()).toMatchObject({ actionsOnSpare: 3, disposeFailures: 0 });
    } finally {
      await single.close();
    }
  });

  it("gives a module's facade one function per export, each calling its own capability with one argument", async () => {
    const seen: string[] = [];
    const out = await pool.runAction({
      code: `import * as m from "toolstore/t";
import { delete as del, b } from "toolstore/t";
export default async () => {
  const got = [await m.a({ x: 1 }), await b(), await del({ y: 2 })];
  let refused = null;
  try { await m.a({}, {}); } catch (e) { refused = e.name + ": " + e.message; }
  return { got, names: Object.keys(m).sort(), distinct: m.a !== m.b, refused };
}`,
      modules: { t: ["a", "b", "delete", "not-a-name"] },
      onCall: async (name, json) => {
        seen.push(`${name} ${json}`);
        return { ok: true as const, value: name };
      },
    });
    expect(out).toMatchObject({ ok: true });
    expect(JSON.parse(out.resultJson ?? "null")).toEqual({
      got: ["t.a", "t.b", "t.delete"],
      names: ["a", "b", "delete"],
      distinct: true,
      refused: "TypeError: t.a takes one plain object argument, got 2 arguments",
    });
    expect(seen).toEqual(['t.a {"x":1}', "t.b {}", 't.delete {"y":2}']);
  });

  it("runs many actions at once, each with its own runtime", async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        pool.runAction({
          code: `globalThis.leak = (globalThis.leak ?? 0) + 1;
import { wait } from "toolstore/t";
export default async (input) => { await wait({}); return [input, globalThis.leak]; }`,
          input: i,
          modules: { t: ["wait"] },
          onCall: async () => {
            await new Promise((r) => setTimeout(r, 100));
            return { ok: true, value: null };
          },
        }),
      ),
    );
    expect(results.map((r) => JSON.parse(r.resultJson ?? "null"))).toEqual(
      Array.from({ length: 40 }, (_, i) => [i, 1]),
    );
  });

  it("caps each run's memory on its own while runs of one key share a QuickJS instance", async () => {
    // Eight runs of the same key park on a host call, each holding 1 MiB of its own.
    const { runs: waiting, release } = await parkRuns(
      pool,
      8,
      "const keep = new Uint8Array(1 << 20).fill(input + 1); await wait({}); return keep[12345];",
    );
    const MiB = 1024 * 1024;
    // Beside them, a run that allocates until it cannot: its own 64 MiB is the cap, not the
    // instance's maximum (16 runs' worth), so it gets at most 48 MiB more than the instance's start.
    const hog = await pool.runAction({
      code: "export default () => { const a = []; try { for (;;) a.push(new Uint8Array(8 << 20)); } catch { return a.length; } }",
      modules: {},
      limits: { memoryBytes: 64 * MiB },
      onCall: noCalls,
    });
    if (hog.ok) expect(Number(hog.resultJson)).toBeLessThanOrEqual(7);
    else expect(hog.error?.kind).toBe("out_of_memory");
    // A run that needs most of its limit still gets it.
    const big = await pool.runAction({
      code: "export default () => { const a = []; for (let i = 0; i < 5; i++) a.push(new Uint8Array(8 << 20).fill(1)); return a.length; }",
      modules: {},
      limits: { memoryBytes: 64 * MiB },
      onCall: noCalls,
    });
    expect(big).toMatchObject({ ok: true, resultJson: "5" });
    release();
    const results = await Promise.all(waiting);
    expect(results.map((r) => r.resultJson)).toEqual(["1", "2", "3", "4", "5", "6", "7", "8"]);
  });

  it("a run that times out leaves the runs sharing its instance running", async () => {
    // One worker, so the parked runs and the runaway share an instance. Freeing the runaway's
    // runtime after its interrupt trips a QuickJS assertion that aborts the instance.
    const single = createSandboxPool({ workers: 1, maxWorkers: 1, watchdogGraceMs: 200 });
    const { runs: parked, release } = await parkRuns(single, 5, "await wait({}); return input;");
    try {
      const runaway = await single.runAction({
        code: "export default async () => { const f = () => Promise.resolve().then(f); f(); await new Promise(() => {}); }",
        modules: {},
        limits: { deadlineMs: 300 },
        onCall: noCalls,
      });
      expect(runaway.error?.kind).toBe("timeout");
      release();
      const results = await Promise.all(parked);
      expect(results.map((r) => r.error?.message ?? r.resultJson)).toEqual(["0", "1", "2", "3", "4"]);
      expect(single.stats().disposeFailures).toBe(0);
    } finally {
      release();
      await single.close();
    }
  });

  it("runs a binding in the calling action's worker when nothing needs masking, else in the toolset's lane", async () => {
    const code = `export function add(a, b) { return { sum: a + b, env: env.MODE }; }
export function fail() { throw new Error("no"); }`;
    const action = `import { add, fail } from "toolstore/t";
export default async () => {
  const a = await add({});
  let failed = null;
  try { await fail({}); } catch (e) { failed = e.message; }
  const [b, c] = await Promise.all([add({}), add({})]);
  return { a, failed, b, c };
}`;
    const run = (secrets?: Record<string, string>) =>
      pool.runAction({
        code: action,
        modules: { t: ["add", "fail"] },
        onCall: async (name, _json, control) => {
          const r = await pool.runBinding({
            code,
            exportName: name.slice("t.".length),
            args: [2, 3],
            env: { MODE: "m" },
            ...(secrets ? { secrets } : {}),
            allowedHosts: [],
            timeoutMs: 2_000,
            caller: control.call,
          });
          return r.ok
            ? { ok: true, value: r.value }
            : { ok: false, error: { error: "x", message: r.error.message } };
        },
      });
    const expected = {
      a: { sum: 5, env: "m" },
      failed: expect.stringContaining("no"),
      b: { sum: 5, env: "m" },
      c: { sum: 5, env: "m" },
    };
    const before = pool.stats().bindingsInPlace;
    const here = await run();
    expect(JSON.parse(here.resultJson ?? "null")).toEqual(expected);
    // Four binding calls, all beside the action; the failure came back through the main thread.
    expect(pool.stats().bindingsInPlace).toBe(before + 4);
    // A secret to mask on the way back: the result must pass the main thread, so the lane.
    const lane = await run({ TOKEN: "s3cret" });
    expect(JSON.parse(lane.resultJson ?? "null")).toEqual(expected);
    expect(pool.stats().bindingsInPlace).toBe(before + 4);
  });

  it("sends an in-place binding's end with its action's end, and not later than the guest's next computation", async () => {
    const code = "export function add(a, b) { return a + b; }";
    let settledAt = 0;
    const run = (after: string) =>
      pool.runAction({
        code: `import { add } from "toolstore/t";
export default async () => { const sum = await add({}); ${after} return sum; }`,
        modules: { t: ["add"] },
        onCall: async (name, _json, control) => {
          const r = await pool.runBinding({
            code,
            exportName: name.slice("t.".length),
            args: [2, 3],
            env: {},
            allowedHosts: [],
            timeoutMs: 2_000,
            caller: control.call,
          });
          settledAt = Date.now();
          return r.ok
            ? { ok: true, value: r.value }
            : { ok: false, error: { error: "x", message: r.error.message } };
        },
      });
    await run(""); // a warm worker and binding context
    const before = pool.stats();
    expect((await run("")).resultJson).toBe("5");
    const after = pool.stats();
    expect(after.bindingsInPlace).toBe(before.bindingsInPlace + 1);
    // The call, then the binding's end and the action's end together.
    expect(after.workerPosts - before.workerPosts).toBe(2);
    // A guest that computes after its call: the binding's end leaves from the interrupt handler.
    const busy = await run("const t = Date.now(); while (Date.now() - t < 1000) {}");
    const endedAt = Date.now();
    await new Promise((resolve) => setImmediate(resolve)); // the binding's own settling, if late
    expect(busy.resultJson).toBe("5");
    expect(endedAt - settledAt).toBeGreaterThan(500);
  });

  it("refuses limits above their ceilings", async () => {
    await expect(
      pool.runAction({
        code: "export default () => 1",
        modules: {},
        limits: { memoryBytes: 8 * 1024 ** 3 },
        onCall: noCalls,
      }),
    ).rejects.toMatchObject({ code: "BAD_INPUT" });
  });
});
