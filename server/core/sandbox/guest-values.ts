/**
 * Reading and making guest values from the host side of a QuickJS context, through the guest
 * helpers (guest-sources.ts HELPERS_SOURCE) so that no host object ever crosses: a string's length
 * without copying it, a string clipped inside the guest first, JSON parsed in the guest, and the
 * catchable error a failed host call raises there. Nothing here holds state.
 */
import type { QuickJSContext, QuickJSHandle, VmCallResult } from "quickjs-emscripten-core";
import type { HELPER_INDEX } from "./guest-sources";
import type { SandboxErrorKind } from "./protocol";

/** The guest helper functions of one context, by name. */
export type Helpers = { -readonly [K in keyof typeof HELPER_INDEX]: QuickJSHandle };

/** Length of a guest string without copying it out (getLength only answers for objects). */
export function stringLength(ctx: QuickJSContext, h: QuickJSHandle): number {
  const length = ctx.getProp(h, "length");
  try {
    return ctx.getNumber(length);
  } finally {
    length.dispose();
  }
}

export function guestParse(ctx: QuickJSContext, helpers: Helpers, json: string): QuickJSHandle {
  const text = ctx.newString(json);
  try {
    return ctx.unwrapResult(ctx.callFunction(helpers.parse, ctx.undefined, text));
  } finally {
    text.dispose();
  }
}

/** Reads a string from the guest through a helper that clips it inside the guest first. */
export function guestString(
  ctx: QuickJSContext,
  fn: QuickJSHandle,
  ...args: (QuickJSHandle | string | number)[]
): string | undefined {
  const handles = args.map((a) =>
    typeof a === "string" ? ctx.newString(a) : typeof a === "number" ? ctx.newNumber(a) : a,
  );
  try {
    const res: VmCallResult<QuickJSHandle> = ctx.callFunction(fn, ctx.undefined, ...handles);
    if (res.error) {
      res.error.dispose();
      return undefined;
    }
    try {
      return ctx.typeof(res.value) === "string" ? ctx.getString(res.value) : undefined;
    } finally {
      res.value.dispose();
    }
  } catch {
    return undefined;
  } finally {
    handles.forEach((h, i) => {
      if (typeof args[i] !== "object") h.dispose();
    });
  }
}

export function classifyGuestError(name: string, message: string): SandboxErrorKind {
  if (name === "InternalError" && message === "interrupted") return "timeout";
  if (name === "InternalError" && /out of memory/.test(message)) return "out_of_memory";
  return "threw";
}

/** The error a failed host call raises in the guest: a CapabilityError carrying `info`'s fields. */
export function guestError(
  ctx: QuickJSContext,
  helpers: Helpers,
  info: Record<string, unknown>,
): QuickJSHandle {
  const message = ctx.newString(String(info.message ?? ""));
  const error = ctx.unwrapResult(ctx.callFunction(helpers.error, ctx.undefined, message));
  message.dispose();
  const name = ctx.newString("CapabilityError");
  ctx.defineProp(error, "name", { value: name, configurable: true, enumerable: false });
  name.dispose();
  for (const [key, value] of Object.entries(info)) {
    if (key === "message") continue;
    if (typeof value === "string") {
      const v = ctx.newString(value);
      ctx.setProp(error, key, v);
      v.dispose();
    } else if (Array.isArray(value) || (value !== null && typeof value === "object")) {
      // Plain JSON data (bad_input's `fields`, budget_exceeded's `budget`), parsed inside the
      // guest: no host object crosses.
      const text = ctx.newString(JSON.stringify(value));
      const parsed = ctx.callFunction(helpers.parse, ctx.undefined, text);
      text.dispose();
      if (parsed.error) parsed.error.dispose();
      else {
        ctx.setProp(error, key, parsed.value);
        parsed.value.dispose();
      }
    }
  }
  return error;
}
