/**
 * The warm-context check and the guest-value helpers in a real QuickJS context: a call that leaves
 * the globals alone keeps its context warm, one that replaces a global, a console method or an
 * overridable prototype method does not, built-ins cannot be changed at all; strings are read
 * clipped inside the guest, and a host call's failure is a CapabilityError with its fields.
 */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HELPER_INDEX, HELPERS_SOURCE } from "./guest-sources";
import { classifyGuestError, guestError, guestString, type Helpers, stringLength } from "./guest-values";
import { loadCappedQuickJS } from "./quickjs-module";
import { GLOBALS_CHECK, globalsUnchanged } from "./warm-globals";

let ctx: QuickJSContext;
let helpers: Helpers;
const disposables: { dispose(): void }[] = [];

beforeAll(async () => {
  const { module } = await loadCappedQuickJS(64 << 20);
  const runtime = module.newRuntime();
  ctx = runtime.newContext();
  const array = ctx.unwrapResult(ctx.evalCode(HELPERS_SOURCE, "helpers", { type: "global" }));
  helpers = {} as Helpers;
  for (const [key, index] of Object.entries(HELPER_INDEX))
    helpers[key as keyof Helpers] = ctx.getProp(array, index);
  array.dispose();
  disposables.push(...Object.values(helpers), ctx, runtime);
});

afterAll(() => {
  for (const d of disposables) d.dispose();
});

function run(code: string): QuickJSHandle {
  return ctx.unwrapResult(ctx.evalCode(code, "test", { type: "global" }));
}

describe("warm globals", () => {
  it("tells a call that left the globals alone from one that replaced a global or a method", () => {
    // The worker installs console (its host functions) before the check runs.
    run("globalThis.console = { log() {} }; 0").dispose();
    const check = run(GLOBALS_CHECK);
    expect(globalsUnchanged(ctx, check)).toBe(true);
    run("[1, 2].map((x) => x * 2); globalThis.NaN").dispose();
    expect(globalsUnchanged(ctx, check)).toBe(true);
    // Built-in namespaces are frozen: the change is refused outright.
    const refused = ctx.evalCode("'use strict'; Math.max = () => 0;", "test", { type: "global" });
    expect(refused.error).toBeDefined();
    refused.error?.dispose();
    const restore = run(
      "(() => { const saved = console.log; console.log = () => {}; return () => { console.log = saved; }; })()",
    );
    expect(globalsUnchanged(ctx, check)).toBe(false);
    ctx.unwrapResult(ctx.callFunction(restore, ctx.undefined)).dispose();
    restore.dispose();
    expect(globalsUnchanged(ctx, check)).toBe(true);
    run("const keep = Array.prototype.map; Array.prototype.map = function () { return []; }; 0").dispose();
    expect(globalsUnchanged(ctx, check)).toBe(false);
    check.dispose();
  });
});

describe("guest values", () => {
  it("reads a guest string's length and a clipped copy without copying it whole", () => {
    const long = run("'x'.repeat(10000)");
    expect(stringLength(ctx, long)).toBe(10_000);
    expect(guestString(ctx, helpers.describe, long, 5)).toBe("xxxxx…");
    long.dispose();
    const object = run("({ name: 'n', message: 'm' })");
    expect(guestString(ctx, helpers.readString, object, "message", 100)).toBe("m");
    expect(guestString(ctx, helpers.readString, object, "missing", 100)).toBeUndefined();
    object.dispose();
  });

  it("raises a host call's failure as a CapabilityError with its fields", () => {
    const error = guestError(ctx, helpers, {
      error: "permission_denied",
      message: "host not allowed",
      fields: ["url"],
      ignored: 7,
    });
    const read = run(
      "(e) => JSON.stringify([e instanceof Error, e.name, e.message, e.error, e.fields, e.ignored])",
    );
    const seen = ctx.unwrapResult(ctx.callFunction(read, ctx.undefined, error));
    read.dispose();
    error.dispose();
    expect(JSON.parse(ctx.getString(seen))).toEqual([
      true,
      "CapabilityError",
      "host not allowed",
      "permission_denied",
      ["url"],
      null,
    ]);
    seen.dispose();
  });

  it("classifies QuickJS's own interrupt and out-of-memory errors", () => {
    expect(classifyGuestError("InternalError", "interrupted")).toBe("timeout");
    expect(classifyGuestError("InternalError", "out of memory")).toBe("out_of_memory");
    expect(classifyGuestError("TypeError", "interrupted")).toBe("threw");
  });
});
