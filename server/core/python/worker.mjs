/**
 * Pyodide worker (a worker_thread started by ./runtime.ts; never imported by the server process).
 *
 * Start-up, in this order, before any toolset code runs:
 *   1. patch the memory maximum of pyodide.asm.wasm (hard cap: an allocation bomb is MemoryError);
 *   2. load Pyodide with an EMPTY `jsglobals` (so `import js` reaches nothing of the host);
 *   3. lock the JavaScript side down (PYTHON.md): stub fs, child_process, net, http(s), dns, ws,
 *      fetch, process.binding/kill/dlopen with functions that throw errno errors (EACCES), delete
 *      require, strip the Pyodide API object, replace the Function / AsyncFunction / Generator
 *      constructors, delete eval, freeze the JS built-ins and pin Error.prepareStackTrace;
 *   4. install the Python side: `toolstore.toolset`, an httpx-compatible client over a synchronous
 *      host bridge (Atomics.wait on a SharedArrayBuffer), and clear errors for threads,
 *      subprocesses and sockets.
 * Then it answers messages: `parse` (ast, never runs the file), `load` (exec toolset.py once for
 * this worker's one trust domain), `call` (one binding). Everything crosses as JSON text.
 */
import { Buffer } from "node:buffer";
import childProcess from "node:child_process";
import dns from "node:dns";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parentPort, workerData } from "node:worker_threads";

const { pyodideDir, maxMemoryPages, interrupt, bridge, bridgeBytes, pythonSources } = workerData;

// --- 1. memory cap: rewrite the wasm memory section's maximum before Pyodide compiles it --------

function readLeb(bytes, at) {
  let result = 0;
  let shift = 0;
  let pos = at;
  for (;;) {
    const b = bytes[pos++];
    result += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) break;
  }
  return { value: result, next: pos };
}

function leb(value) {
  const out = [];
  let v = value;
  do {
    let b = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) b |= 0x80;
    out.push(b);
  } while (v > 0);
  return out;
}

/** A copy of the module with its memory's maximum set to `pages` (64 KiB each); undefined when it defines none. */
export function patchMemoryMaximum(input, pages) {
  const bytes = new Uint8Array(
    input.buffer ? input.buffer.slice(input.byteOffset, input.byteOffset + input.byteLength) : input,
  );
  let pos = 8;
  while (pos < bytes.length) {
    const id = bytes[pos];
    const size = readLeb(bytes, pos + 1);
    const start = size.next;
    const end = start + size.value;
    if (id === 5) {
      const count = readLeb(bytes, start);
      const flags = bytes[count.next];
      const min = readLeb(bytes, count.next + 1);
      const tail = (flags & 1) === 1 ? readLeb(bytes, min.next).next : min.next;
      if (min.value > pages)
        throw new Error(`memory cap ${pages} pages is below the module's minimum ${min.value}`);
      const body = [
        ...leb(count.value),
        flags | 1,
        ...leb(min.value),
        ...leb(pages),
        ...bytes.slice(tail, end),
      ];
      const section = [5, ...leb(body.length), ...body];
      const out = new Uint8Array(pos + section.length + (bytes.length - end));
      out.set(bytes.subarray(0, pos), 0);
      out.set(section, pos);
      out.set(bytes.subarray(end), pos + section.length);
      return out;
    }
    pos = end;
  }
  return undefined;
}

const originalInstantiate = WebAssembly.instantiate;
const originalCompile = WebAssembly.compile;
let patchedCount = 0;
const isBytes = (x) => x instanceof ArrayBuffer || ArrayBuffer.isView(x);
function capped(source) {
  if (!isBytes(source)) return source;
  const patched = patchMemoryMaximum(source, maxMemoryPages);
  if (!patched) return source;
  patchedCount++;
  return patched;
}
WebAssembly.instantiate = function instantiate(source, imports) {
  return originalInstantiate.call(this, capped(source), imports);
};
WebAssembly.compile = function compile(source) {
  return originalCompile.call(this, capped(source));
};
// Force the byte paths above (streaming compilation would skip the patch).
WebAssembly.instantiateStreaming = undefined;
WebAssembly.compileStreaming = undefined;

// --- 2. load -------------------------------------------------------------------------------------

const logs = [];
let logChars = 0;
let logLimit = 64 * 1024;
function pushLog(level, text) {
  if (logChars >= logLimit) return;
  const kept = text.length + logChars > logLimit ? `${text.slice(0, logLimit - logChars)}… [log cut]` : text;
  logChars += kept.length;
  logs.push({ level, text: kept });
}

const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL: `${pyodideDir}${path.sep}`,
  jsglobals: {},
  stdout: (text) => pushLog("log", text),
  stderr: (text) => pushLog("error", text),
  env: { HOME: "/home/pyodide", PYTHONHASHSEED: "0" },
});
if (patchedCount === 0) throw new Error("pyodide.asm.wasm was not loaded through the memory-cap patch");
// What this file keeps of the API object; the object itself is stripped below.
const pyRun = pyodide.runPython.bind(pyodide);
const pyGlobals = pyodide.globals;
const runPython = (code) => pyRun(code, { globals: pyGlobals });
pyodide.setInterruptBuffer(new Int8Array(interrupt));
const emscripten = pyodide._module;
const wasmBytes = () => emscripten.HEAPU8.buffer.byteLength;

// --- the host bridge (synchronous: Python waits on the shared buffer) ------------------------------

const bridgeState = new Int32Array(bridge, 0, 2);
const bridgeData = new Uint8Array(bridge, 8, bridgeBytes);
let currentCall = 0;
function hostFetch(requestJson) {
  const request = String(requestJson);
  Atomics.store(bridgeState, 0, 0);
  parentPort.postMessage({ t: "fetch", id: currentCall, json: request });
  // Woken by the host; the host terminates this worker when the deadline passes.
  while (Atomics.load(bridgeState, 0) === 0) Atomics.wait(bridgeState, 0, 0);
  const length = Atomics.load(bridgeState, 1);
  return Buffer.from(bridgeData.subarray(0, length)).toString("utf8");
}
pyodide.registerJsModule("_toolstore_host", { fetch: hostFetch });

// --- the Python side (trusted code, before the lockdown; toolset code runs only after it) ---------

runPython(pythonSources.bootstrap);
const entry = runPython("_toolstore_entry");

// --- 3. lockdown of the JavaScript side ----------------------------------------------------------

function denied(what) {
  const error = new Error(`EACCES: ${what} is not available in a ToolStore sandbox`);
  error.code = "EACCES";
  error.errno = -13;
  error.syscall = what;
  return error;
}
function stubAll(target, label) {
  if (!target) return;
  for (const key of Object.getOwnPropertyNames(target)) {
    let value;
    try {
      value = target[key];
    } catch {
      continue;
    }
    if (typeof value !== "function") continue;
    try {
      Object.defineProperty(target, key, {
        value: function blocked() {
          throw denied(`${label}.${key}`);
        },
        writable: false,
        configurable: false,
      });
    } catch {
      // A non-configurable property keeps its value; the module is unreachable without require.
    }
  }
}
const require = createRequire(import.meta.url);
let wsModule;
try {
  wsModule = require("ws");
} catch {
  wsModule = undefined;
}
stubAll(fs.promises, "fs.promises");
stubAll(fs, "fs");
// os.system() in C calls spawnSync and reads its status; a refused command exits 126, without
// throwing through C (which Pyodide treats as fatal).
try {
  Object.defineProperty(childProcess, "spawnSync", {
    value: function blocked() {
      return { pid: 0, status: 126, signal: null, output: [], stdout: null, stderr: null };
    },
    writable: false,
    configurable: false,
  });
} catch {
  // stubAll makes it throw
}
stubAll(childProcess, "child_process");

stubAll(net, "net");
stubAll(http, "http");
stubAll(https, "https");
stubAll(dns.promises, "dns.promises");
stubAll(dns, "dns");
if (wsModule) stubAll(wsModule, "ws");
for (const name of ["binding", "_linkedBinding", "kill", "dlopen", "chdir"]) {
  try {
    Object.defineProperty(process, name, {
      value: function blocked() {
        throw denied(`process.${name}`);
      },
      writable: false,
      configurable: false,
    });
  } catch {
    // keep going: the others still apply
  }
}
for (const name of [
  "fetch",
  "WebSocket",
  "XMLHttpRequest",
  "require",
  "eval",
  "importScripts",
  "EventSource",
]) {
  try {
    delete globalThis[name];
  } catch {
    // non-configurable globals are overwritten below
  }
  if (name in globalThis) {
    try {
      globalThis[name] = undefined;
    } catch {
      // ignore
    }
  }
}
// The API object and the Emscripten module must not be reachable from Python (pyodide_js).
for (const name of ["pyodide_js", "js"]) {
  try {
    pyodide.unregisterJsModule(name);
  } catch {
    // not registered
  }
}
runPython(`
import sys
for _name in ("pyodide_js", "_pyodide_core_js", "js"):
    sys.modules.pop(_name, None)
del _name
`);
const apiObject = pyodide;
for (const key of Object.keys(apiObject)) {
  try {
    delete apiObject[key];
  } catch {
    // ignore
  }
}
for (const key of ["_module", "_api", "FS", "PATH", "ERRNO_CODES", "globals", "pyodide_py"]) {
  try {
    Object.defineProperty(apiObject, key, { value: undefined, writable: false, configurable: false });
  } catch {
    // ignore
  }
}
// No code from strings: Function, AsyncFunction, GeneratorFunction, AsyncGeneratorFunction.
function blockedConstructor() {
  throw new EvalError("code generation from strings is disabled in a ToolStore sandbox");
}
// Code that reads `Function.prototype.apply` (Pyodide does) still finds the real prototype.
blockedConstructor.prototype = Function.prototype;
Object.freeze(blockedConstructor);
const constructorPrototypes = [
  Function.prototype,
  Object.getPrototypeOf(async () => {}),
  Object.getPrototypeOf(function* () {}),
  Object.getPrototypeOf(async function* () {}),
];
for (const proto of constructorPrototypes) {
  Object.defineProperty(proto, "constructor", {
    value: blockedConstructor,
    writable: false,
    configurable: false,
  });
}
Object.defineProperty(globalThis, "Function", {
  value: blockedConstructor,
  writable: false,
  configurable: false,
});
Object.defineProperty(Error, "prepareStackTrace", { value: undefined, writable: false, configurable: false });
// Freeze the JS built-ins (not Error itself: Pyodide writes Error.stackTraceLimit).
const builtins = [
  Object,
  Object.prototype,
  Array,
  Array.prototype,
  Function.prototype,
  String,
  String.prototype,
  Number,
  Number.prototype,
  Boolean,
  Boolean.prototype,
  Symbol,
  Symbol.prototype,
  Promise,
  Promise.prototype,
  RegExp,
  RegExp.prototype,
  Map,
  Map.prototype,
  Set,
  Set.prototype,
  WeakMap,
  WeakMap.prototype,
  JSON,
  Math,
  Reflect,
  Proxy,
  Error.prototype,
  TypeError.prototype,
  ...constructorPrototypes,
  Object.getPrototypeOf(Int8Array),
  Object.getPrototypeOf(Int8Array.prototype),
];
for (const b of builtins) {
  try {
    Object.freeze(b);
  } catch {
    // ignore
  }
}

// --- 4. answer the host ---------------------------------------------------------------------------

function reply(message) {
  parentPort.postMessage(message);
}

parentPort.on("message", (message) => {
  if (message.t === "parse") {
    logs.length = 0;
    logChars = 0;
    const json = entry("parse", message.source, "", 0);
    reply({ t: "parsed", id: message.id, json });
    return;
  }
  if (message.t === "call") {
    currentCall = message.id;
    logs.length = 0;
    logChars = 0;
    logLimit = message.logBytes;
    Atomics.store(new Int8Array(interrupt), 0, 0);
    const started = performance.now();
    let json;
    try {
      json = entry("call", message.code, message.request, message.resultBytes);
    } catch (error) {
      json = JSON.stringify({ ok: false, kind: "internal", message: String(error?.message ?? error) });
    }
    const durationMs = performance.now() - started;
    if (typeof json === "string" && json.length > message.resultBytes + 4096) {
      json = JSON.stringify({
        ok: false,
        kind: "threw",
        message: `the result is larger than the limit of ${message.resultBytes} characters`,
      });
    }
    reply({ t: "done", id: message.id, json, logs: logs.splice(0), durationMs, memoryBytes: wasmBytes() });
  }
});
reply({ t: "ready", memoryBytes: wasmBytes() });
