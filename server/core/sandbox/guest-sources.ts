/**
 * The little JavaScript that runs INSIDE the QuickJS guest. Most of the plumbing (console,
 * capability calls, result and error encoding) is done by the worker through host functions and
 * captured guest intrinsics, because every line here is compiled again for every run (about
 * 60 ns per character in quickjs-ng, no bytecode cache across runtimes).
 *
 * The host never reads guest objects itself: it calls the guest's own JSON.stringify (captured
 * before any guest code runs) once per value, inside the deadline, and reads the resulting string.
 * Getters, toJSON and Proxy traps therefore run exactly once, in the guest.
 */

/** Globals the worker sets before evaluation; the bridge module removes them. */
export const GUEST_GLOBALS = {
  call: "__toolstore_call",
  env: "__toolstore_env",
  now: "__toolstore_now",
  random: "__toolstore_random",
} as const;

/** The one export of a toolset's module rewritten as a factory (binding-factory.ts). */
export const FACTORY_EXPORT = "__toolstore_factory";

export const MODULE_NAMES = {
  driver: "toolstore:driver",
  bridge: "toolstore:bridge",
  action: "action.js",
  toolset: "toolset.js",
} as const;

/**
 * Evaluated once per context before guest code, as a global script: captured intrinsics and small
 * helpers the worker calls. Order matters (worker-main.ts reads them by index).
 */
export const HELPERS_SOURCE = `((S, J, E, stringify) => [
  J.stringify,
  J.parse,
  E,
  (v) => v instanceof E,
  (v, k, n) => { const s = v[k]; return typeof s === "string" ? s.slice(0, n) : undefined; },
  (v, n) => {
    let s;
    try {
      s = typeof v === "string" ? v : v instanceof E ? S(v.name) + ": " + S(v.message)
        : typeof v === "bigint" ? v + "n" : (typeof v === "object" && v !== null ? stringify(v) : undefined) ?? S(v);
    } catch (e) {
      try { s = S(v); } catch (e2) { s = "[unprintable]"; }
    }
    return s.length > n ? s.slice(0, n) + "…" : s;
  },
])(String, JSON, Error, JSON.stringify)`;

export const HELPER_INDEX = {
  stringify: 0,
  parse: 1,
  error: 2,
  isError: 3,
  readString: 4,
  describe: 5,
} as const;

/**
 * Bridge for actions: hands the host call function to the facades and hides it from the action.
 * Date and Math.random read the host's recorded clock and seeded generator (a replay of the run
 * sees the same values; see ActionJob.nondet).
 */
const ACTION_BRIDGE = `const g = globalThis, call = g.${GUEST_GLOBALS.call}, now = g.${GUEST_GLOBALS.now}, random = g.${GUEST_GLOBALS.random};
delete g.${GUEST_GLOBALS.call}; delete g.${GUEST_GLOBALS.now}; delete g.${GUEST_GLOBALS.random};
const D = g.Date;
function Date(...a) {
  if (!new.target) return new D(now()).toString();
  return Reflect.construct(D, a.length === 0 ? [now()] : a, new.target);
}
Object.defineProperties(Date, { prototype: { value: D.prototype }, length: { value: 7 } });
Date.now = function now_() { return now(); };
Date.parse = D.parse; Date.UTC = D.UTC;
Object.defineProperty(D.prototype, "constructor", { value: Date, writable: true, configurable: true });
g.Date = Date;
Math.random = function random_() { return random(); };
export { call };
`;

/** Bridge for toolset bindings: the frozen `env`, and `fetch` and `hmac`, which go through the host. */
const BINDING_BRIDGE = `const call = globalThis.${GUEST_GLOBALS.call};
const g = globalThis, S = String, keys = Object.keys, freeze = Object.freeze;
Object.defineProperty(g, "env", { value: freeze(JSON.parse(g.${GUEST_GLOBALS.env})) });
delete g.${GUEST_GLOBALS.call};
delete g.${GUEST_GLOBALS.env};
function headersOf(record) {
  const lower = {};
  for (const k of keys(record)) lower[k.toLowerCase()] = S(record[k]);
  const get = (n) => { const v = lower[S(n).toLowerCase()]; return v === undefined ? null : v; };
  return freeze({ get, has: (n) => get(n) !== null, entries: () => keys(lower).map((k) => [k, lower[k]]),
    forEach: (cb) => keys(lower).forEach((k) => cb(lower[k], k)), toJSON: () => lower });
}
g.fetch = async function fetch(input, init) {
  const o = init == null ? {} : init;
  if (o.body != null && typeof o.body !== "string") throw new TypeError("fetch: body must be a string; use JSON.stringify(...)");
  const headers = {};
  if (o.headers != null) for (const k of keys(o.headers)) headers[k] = S(o.headers[k]);
  const request = { url: S(input), method: S(o.method || "GET").toUpperCase(), headers };
  if (typeof o.body === "string") request.body = o.body;
  const res = await call("fetch", request, 1);
  return freeze({ status: res.status, statusText: res.statusText || "", ok: res.status >= 200 && res.status < 300,
    url: res.url, headers: headersOf(res.headers || {}), text: async () => res.body, json: async () => JSON.parse(res.body) });
};
g.hmac = async function hmac(secret, data, options) {
  const o = options == null ? {} : options;
  const request = { secret: S(secret), data: S(data) };
  if (o.algorithm != null) request.algorithm = S(o.algorithm);
  if (o.encoding != null) request.encoding = S(o.encoding);
  return call("hmac", request, 1);
};
`;

export const BRIDGE_SOURCES = { action: ACTION_BRIDGE, binding: BINDING_BRIDGE } as const;

/** Global script: load the bridge first (it removes the host globals), then the guest module. */
export const DRIVER_SOURCES = {
  action: `import("${MODULE_NAMES.bridge}").then(() => import("${MODULE_NAMES.action}"))`,
  binding: `import("${MODULE_NAMES.bridge}").then(() => import("${MODULE_NAMES.toolset}"))`,
} as const;

/** A spare action context's two halves: the bridge, loaded ahead; then the action's module. */
export const SPARE_DRIVER_SOURCES = {
  bridge: `import("${MODULE_NAMES.bridge}")`,
  action: `import("${MODULE_NAMES.action}")`,
} as const;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Source of the facade module `toolstore/<module>`: one async function per export, each a
 * capability call. They all come from one function literal: a literal is compiled again in every
 * run, and one per export cost about 5 µs each (a module of 9 exports: 239 → 192 µs to import).
 */
export function facadeSource(moduleName: string, exportNames: readonly string[]): string {
  const made: string[] = [];
  const named: string[] = [];
  exportNames.forEach((name, i) => {
    if (!IDENTIFIER.test(name)) return;
    made.push(`e${i} = f(${JSON.stringify(`${moduleName}.${name}`)})`);
    named.push(`e${i} as ${name}`);
  });
  if (made.length === 0) return "export {};";
  return [
    `import { call } from "${MODULE_NAMES.bridge}";`,
    "const f = (w) => async function (args) { return call(w, args, arguments.length); };",
    `const ${made.join(", ")};`,
    `export { ${named.join(", ")} };`,
  ].join("\n");
}
