/**
 * The check that lets a warm binding context serve another call: a global script run once in the
 * context before the toolset's code first runs there, and the host-side call of the function it
 * returns.
 */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";

/**
 * Global script, run in a binding's context before the toolset's code first runs there, so that a
 * warm context gives the next call the built-ins and globals as they were:
 * - the built-in constructors and namespaces (`Math`, `JSON`, `Array`, ...) are frozen: replacing
 *   `Math.max` throws a TypeError;
 * - the global object, `console` and the built-in prototypes are made non-extensible, and none of
 *   their properties can be deleted or redefined (so none becomes a getter that runs guest code
 *   when this check reads it);
 * - the prototype methods that objects commonly set their own over (SES's override list: every
 *   property of Object.prototype, Array.prototype and the typed arrays' prototype; constructor,
 *   name, message and toString of the Function and Error prototypes; Promise.prototype's
 *   constructor) stay writable, as do the globals and console's methods, and their values are
 *   remembered; every other prototype property is read-only;
 * - it returns a function that answers whether the remembered values are all still the same: a
 *   call that replaced a global, a console method or a prototype's method does not leave its
 *   context warm.
 * It holds its own references, so guest code cannot fool it by replacing Reflect or Object. Not
 * seen: state inside objects reached through globals that are not built-ins.
 */
export const GLOBALS_CHECK = `(() => {
  const g = globalThis, ownKeys = Reflect.ownKeys, seal = Object.preventExtensions;
  const describe = Object.getOwnPropertyDescriptor, define = Object.defineProperty;
  const typed = Object.getPrototypeOf(Uint8Array);
  const frozen = [Object, Function, Array, String, Number, Boolean, Symbol, BigInt, Math, JSON, Reflect,
    Promise, Map, Set, WeakMap, WeakSet, Date, RegExp, Error, TypeError, RangeError, ArrayBuffer, typed,
    Uint8Array];
  const all = true;
  const overridable = new Map([[g, all], [console, all], [Object.prototype, all], [Array.prototype, all],
    [typed.prototype, all], [Function.prototype, ["constructor", "bind", "name", "toString"]],
    [Error.prototype, ["constructor", "message", "name", "toString"]],
    [TypeError.prototype, ["constructor", "message", "name"]], [RangeError.prototype, ["message"]],
    [Promise.prototype, ["constructor"]]]);
  const watched = [g, console, Object.prototype, Function.prototype, Array.prototype, String.prototype,
    Number.prototype, Boolean.prototype, Symbol.prototype, BigInt.prototype, Promise.prototype,
    Map.prototype, Set.prototype, WeakMap.prototype, WeakSet.prototype, Date.prototype,
    RegExp.prototype, Error.prototype, TypeError.prototype, RangeError.prototype,
    ArrayBuffer.prototype, typed.prototype, Uint8Array.prototype];
  const objects = [], keys = [], values = [];
  for (let j = 0; j < watched.length; j++) {
    const o = watched[j], own = ownKeys(o), keep = overridable.get(o);
    for (let i = 0; i < own.length; i++) {
      const key = own[i], d = describe(o, key);
      if ("value" in d && d.writable) {
        if (keep === all || (keep !== undefined && keep.includes(key))) {
          objects.push(o);
          keys.push(key);
          values.push(d.value);
          define(o, key, { configurable: false });
        } else define(o, key, { configurable: false, writable: false });
      } else if (d.configurable) define(o, key, { configurable: false });
    }
  }
  for (let i = 0; i < frozen.length; i++) Object.freeze(frozen[i]);
  for (let i = 0; i < watched.length; i++) seal(watched[i]);
  return function unchanged() {
    for (let i = 0; i < keys.length; i++) {
      const a = objects[i][keys[i]], b = values[i];
      // NaN (globalThis.NaN) is the one value not equal to itself.
      if (a !== b && !(a !== a && b !== b)) return false;
    }
    return true;
  };
})()`;

/** Whether the call left the globals as they were (a failing check counts as changed). */
export function globalsUnchanged(ctx: QuickJSContext, check: QuickJSHandle): boolean {
  const result = ctx.callFunction(check, ctx.undefined);
  if (result.error) {
    result.error.dispose();
    return false;
  }
  const ok = ctx.typeof(result.value) === "boolean" && ctx.dump(result.value) === true;
  result.value.dispose();
  return ok;
}
