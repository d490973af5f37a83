/**
 * JavaScript that runs INSIDE the QuickJS guest: the bridge module (console, capability calls,
 * result encoding, and for toolset bindings `env` and `fetch`), the two driver modules, and the
 * facade generator for `toolstore/<module>` imports.
 *
 * The bridge is evaluated before any guest code, captures the host functions the worker put on
 * the global object, and deletes them. Everything that crosses to the host is a JSON string made
 * here, once: the host never reads a guest object, so getters, toJSON and Proxy traps run exactly
 * once, inside the guest, under the deadline. The host stays the authority: it re-checks every
 * name and parses every string.
 */

/** Globals the worker sets before evaluation; the bridge removes them. */
export const GUEST_GLOBALS = {
  host: "__toolstore_host",
  log: "__toolstore_log",
  done: "__toolstore_done",
  config: "__toolstore_config",
} as const;

/** Config the worker hands to the bridge (as JSON text in `GUEST_GLOBALS.config`). */
export interface BridgeConfig {
  kind: "action" | "binding";
  maxResultChars: number;
  maxArgsChars: number;
  maxLogChars: number;
  inputJson?: string;
  exportName?: string;
  argsJson?: string;
  envJson?: string;
}

export const MODULE_NAMES = {
  driver: "toolstore:driver",
  bridge: "toolstore:bridge",
  action: "action.js",
  toolset: "toolset.js",
} as const;

// Kept small on purpose: it is compiled for every run (about 60 ns per character in quickjs-ng).
const BRIDGE_CORE = `
const g = globalThis, host = g.${GUEST_GLOBALS.host}, log = g.${GUEST_GLOBALS.log}, done = g.${GUEST_GLOBALS.done};
const config = JSON.parse(g.${GUEST_GLOBALS.config});
delete g.${GUEST_GLOBALS.host}; delete g.${GUEST_GLOBALS.log}; delete g.${GUEST_GLOBALS.done}; delete g.${GUEST_GLOBALS.config};
const stringify = JSON.stringify, parse = JSON.parse, S = String, E = Error, TE = TypeError, P = Promise;
const keys = Object.keys, freeze = Object.freeze;
const clip = (t, max) => t.length > max ? t.slice(0, max) + "…" : t;
function describe(v) {
  try {
    if (typeof v === "string") return v;
    if (v instanceof E) return S(v.name) + ": " + S(v.message);
    if (typeof v === "object" && v !== null) { const j = stringify(v); if (j !== undefined) return j; }
    return typeof v === "bigint" ? v + "n" : S(v);
  } catch (e) {
    try { return S(v); } catch (e2) { return "[unprintable]"; }
  }
}
const logger = (level) => (...args) => {
  let text = "";
  for (let i = 0; i < args.length && text.length <= config.maxLogChars; i++) text += (i ? " " : "") + describe(args[i]);
  log(level, clip(text, config.maxLogChars));
};
g.console = freeze({ log: logger("log"), info: logger("info"), warn: logger("warn"), error: logger("error"),
  debug: logger("debug"), trace: logger("debug") });
function fail(e) {
  const out = { name: "NonErrorThrown", message: "" };
  try {
    if (e instanceof E) {
      out.name = S(e.name);
      out.message = S(e.message);
      if (typeof e.stack === "string" && e.stack) out.stack = clip(e.stack, 8000);
    } else out.message = "the action threw a non-Error value: " + describe(e);
  } catch (e2) {
    out.message = "[unprintable error]";
  }
  out.message = clip(out.message, 4000);
  done(false, stringify(out));
}
function finish(value) {
  let json;
  try { json = stringify(value); } catch (e) {
    // Engine errors (out of memory, stack overflow) keep their identity so the kind stays right.
    if (e instanceof E && (e.name === "InternalError" || e.name === "RangeError")) return fail(e);
    return fail(new TE("the result is not JSON-serializable: " + describe(e)));
  }
  if (json !== undefined && json.length > config.maxResultChars) {
    return fail(new RangeError("the result is " + json.length + " characters of JSON, over the limit of " +
      config.maxResultChars + "; return a summary instead"));
  }
  done(true, json);
}
`;

const ACTION_BRIDGE = `
class CapabilityError extends E {
  constructor(info) {
    super(S(info.message));
    for (const k of keys(info)) if (k !== "message") this[k] = info[k];
  }
}
Object.defineProperty(CapabilityError.prototype, "name", { value: "CapabilityError", writable: true, configurable: true });
function decode(reply) {
  const r = parse(reply);
  if (r.ok) return r.value;
  throw new CapabilityError(r.error);
}
/** Capability call used by the generated facades: snapshot the argument once, ask the host, decode. */
export function call(name, args, argc) {
  return new P((resolve) => {
    if (argc > 1) throw new TE(name + " takes one plain object argument, got " + argc + " arguments");
    if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) {
      throw new TE(name + " takes one plain object argument like { key: value }");
    }
    const json = args === undefined ? "{}" : stringify(args);
    if (typeof json !== "string" || json[0] !== "{") throw new TE(name + ": the argument must serialize to a JSON object");
    if (json.length > config.maxArgsChars) {
      throw new RangeError(name + ": arguments are " + json.length + " characters of JSON, over the limit of " + config.maxArgsChars);
    }
    resolve(host(name, json));
  }).then(decode);
}
export function start(load) {
  load().then((ns) => {
    if (typeof ns.default !== "function") {
      throw new TE("the action must export a default function: export default async function (input) { ... }");
    }
    return ns.default(parse(config.inputJson));
  }).then(finish, fail);
}
`;

const BINDING_BRIDGE = `
Object.defineProperty(g, "env", { value: freeze(parse(config.envJson)) });
function makeHeaders(record) {
  const lower = {};
  for (const k of keys(record)) lower[k.toLowerCase()] = S(record[k]);
  const get = (n) => { const v = lower[S(n).toLowerCase()]; return v === undefined ? null : v; };
  return freeze({ get, has: (n) => get(n) !== null, entries: () => keys(lower).map((k) => [k, lower[k]]),
    forEach: (cb) => keys(lower).forEach((k) => cb(lower[k], k)), toJSON: () => lower });
}
g.fetch = function fetch(input, init) {
  return new P((resolve) => {
    const o = init == null ? {} : init;
    if (o.body != null && typeof o.body !== "string") throw new TE("fetch: body must be a string; use JSON.stringify(...)");
    const headers = {};
    if (o.headers != null) for (const k of keys(o.headers)) headers[k] = S(o.headers[k]);
    const request = { url: S(input), method: S(o.method || "GET").toUpperCase(), headers };
    if (typeof o.body === "string") request.body = o.body;
    resolve(host("fetch", stringify(request)));
  }).then((reply) => {
    const r = parse(reply);
    if (!r.ok) throw new TE("fetch failed: " + S(r.error && r.error.message));
    const res = r.value;
    return freeze({ status: res.status, statusText: res.statusText || "", ok: res.status >= 200 && res.status < 300,
      url: res.url, headers: makeHeaders(res.headers || {}), text: () => P.resolve(res.body),
      json: () => P.resolve().then(() => parse(res.body)) });
  });
};
export function start(load) {
  load().then((ns) => {
    const fn = ns[config.exportName];
    if (typeof fn !== "function") throw new TE("the toolset has no exported function " + config.exportName);
    return fn(...parse(config.argsJson));
  }).then(finish, fail);
}
`;

/** Bridge module source for a run of the given kind. */
export const BRIDGE_SOURCES = {
  action: BRIDGE_CORE + ACTION_BRIDGE,
  binding: BRIDGE_CORE + BINDING_BRIDGE,
} as const;

export const DRIVER_SOURCES = {
  action: `import { start } from "${MODULE_NAMES.bridge}";\nstart(() => import("${MODULE_NAMES.action}"));\n`,
  binding: `import { start } from "${MODULE_NAMES.bridge}";\nstart(() => import("${MODULE_NAMES.toolset}"));\n`,
} as const;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** Source of the facade module `toolstore/<module>`: one function per export, each a capability call. */
export function facadeSource(moduleName: string, exportNames: readonly string[]): string {
  const lines = [`import { call } from "${MODULE_NAMES.bridge}";`];
  exportNames.forEach((name, i) => {
    if (!IDENTIFIER.test(name)) return;
    const wire = JSON.stringify(`${moduleName}.${name}`);
    lines.push(`const e${i} = function (args) { return call(${wire}, args, arguments.length); };`);
    lines.push(`export { e${i} as ${name} };`);
  });
  return lines.join("\n");
}
