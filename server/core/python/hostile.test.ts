/**
 * Hostile Python: every escape route PYTHON.md lists (js, pyodide_js, JsProxy constructor chains,
 * os.system, mountNodeFS, sockets, sys.meta_path, gc.get_objects), plus loops that catch
 * BaseException, C-level loops, memory bombs, recursion, huge outputs and monkey-patching that
 * would affect another toolset. Each case is followed by a normal call in the same trust domain,
 * which must answer: nothing escapes, nothing hangs, the runtime stays healthy.
 */
import { existsSync, rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BindingResult } from "../sandbox/binding-runtime";
import { createPythonRuntime, type PythonRuntime } from "./runtime";

const CANARY = `/tmp/toolstore-h16-pwned-${process.pid}`;
let python: PythonRuntime;

beforeAll(async () => {
  python = createPythonRuntime({
    maxWorkers: 2,
    spareWorkers: 1,
    memoryBytes: 192 << 20,
    resultBytes: 256 * 1024,
  });
  await python.warm();
}, 120_000);

afterAll(async () => {
  await python?.close();
  rmSync(CANARY, { force: true });
});

function toolset(body: string): string {
  const indented = body
    .trim()
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n");
  return `from toolstore.toolset import tool\n\n@tool("read")\ndef attack():\n${indented}\n\n@tool("read")\ndef ok(x: int = 41) -> int:\n    return x + 1\n`;
}

async function call(code: string, fn: string, domain: string, timeoutMs = 20_000): Promise<BindingResult> {
  return python.runBinding({
    trustDomain: domain,
    code,
    exportName: fn,
    args: [],
    kwargs: {},
    env: { TOOLSET_VAR: "mine" },
    allowedHosts: [],
    timeoutMs,
  });
}

/** Runs the attack, then a normal call in the same trust domain that must answer 42. */
async function attack(
  body: string,
  opts: { domain?: string; timeoutMs?: number } = {},
): Promise<BindingResult> {
  const code = toolset(body);
  const domain = opts.domain ?? "hostile@1";
  const result = await call(code, "attack", domain, opts.timeoutMs);
  const after = await call(code, "ok", domain);
  expect(after).toMatchObject({ ok: true, value: 42 });
  expect(existsSync(CANARY)).toBe(false);
  return result;
}

/** The attack returned a value (it caught its own failure): the value as text. */
function returned(result: BindingResult): string {
  expect(result.ok).toBe(true);
  return JSON.stringify(result.ok ? result.value : null);
}

describe("[HOSTILE-PY] escape routes of PYTHON.md", { timeout: 120_000 }, () => {
  it("1 import js reaches nothing of the host", async () => {
    const r = await attack(`
try:
    import js
    return {"escaped": hasattr(js, "process"), "keys": str(dir(js))[:200]}
except Exception as e:
    return {"blocked": repr(e)}`);
    expect(returned(r)).not.toContain('"escaped":true');
  });

  it("2 import pyodide_js is gone", async () => {
    const r = await attack(`
try:
    import pyodide_js
    return {"escaped": str(getattr(pyodide_js, "_module", None))}
except Exception as e:
    return {"blocked": repr(e)}`);
    expect(returned(r)).toContain("blocked");
  });

  it("3 a JsProxy's constructor chain cannot build code from strings", async () => {
    const r = await attack(`
import _toolstore_host
out = []
for chain in ("constructor", "constructor.constructor"):
    try:
        obj = _toolstore_host.fetch
        for part in chain.split("."):
            obj = getattr(obj, part)
        out.append(str(obj("return typeof process")()))
    except Exception as e:
        out.append("blocked " + type(e).__name__)
return out`);
    expect(returned(r)).not.toContain("object");
    expect(returned(r)).toContain("blocked");
  });

  it("4 the host module object cannot be walked to process", async () => {
    const r = await attack(`
import _toolstore_host
found = []
for name in ("process", "require", "globalThis", "module", "_module", "__proto__"):
    try:
        v = getattr(_toolstore_host, name)
        found.append((name, str(v)[:40]))
    except Exception:
        pass
try:
    proto = _toolstore_host.fetch.__proto__
    found.append(("apply", str(proto.constructor("return process")())))
except Exception as e:
    found.append(("blocked", type(e).__name__))
return found`);
    expect(returned(r)).not.toMatch(/\[object process\]|versions/);
  });

  it("5 os.system does not run host commands", async () => {
    const r = await attack(`
import os
try:
    return {"rc": os.system("touch ${CANARY}")}
except Exception as e:
    return {"blocked": repr(e)}`);
    expect(returned(r)).toContain("subprocesses are not available");
  });

  it("6 posix.system (the C function under os.system) reaches no child_process", async () => {
    const r = await attack(`
import posix
try:
    return {"rc": posix.system("touch ${CANARY}")}
except BaseException as e:
    return {"blocked": repr(e)}`);
    expect(existsSync(CANARY)).toBe(false);
    void r;
  });

  it("7 subprocess is refused with a clear error", async () => {
    const r = await attack(`
import subprocess
try:
    return subprocess.run(["touch", "${CANARY}"]).returncode
except Exception as e:
    return {"blocked": str(e)}`);
    expect(returned(r)).toContain("subprocesses are not available");
  });

  it("8 run_js / eval of JavaScript is blocked", async () => {
    const r = await attack(`
out = []
try:
    from pyodide.code import run_js
    out.append(str(run_js("typeof process")))
except BaseException as e:
    out.append("blocked " + type(e).__name__)
return out`);
    expect(returned(r)).not.toContain("object");
  });

  it("9 gc.get_objects finds no JsProxy that mounts host folders or reaches process", async () => {
    const r = await attack(`
import gc
hits = []
for o in gc.get_objects():
    t = type(o).__name__
    if not t.startswith("Js"):
        continue
    for attr in ("mountNodeFS", "_module", "process", "require", "FS"):
        try:
            v = getattr(o, attr)
            if v is not None and str(v) != "undefined":
                hits.append((t, attr))
        except Exception:
            pass
    try:
        v = o.constructor("return process")()
        hits.append((t, "Function"))
    except Exception:
        pass
return hits[:20]`);
    expect(returned(r)).toBe("[]");
  });

  it("10 sockets are refused (socket.socket and the C-level _socket)", async () => {
    const r = await attack(`
out = []
import socket
try:
    socket.socket().connect(("127.0.0.1", 22))
    out.append("connected")
except BaseException as e:
    out.append(str(e)[:80])
try:
    import _socket
    s = _socket.socket()
    s.connect(("127.0.0.1", 22))
    out.append("connected")
except BaseException as e:
    out.append("blocked " + type(e).__name__)
return out`);
    expect(returned(r)).not.toContain("connected");
    expect(returned(r)).toContain("sockets are not available");
  });

  it("11 ctypes -> emscripten_run_script cannot run JavaScript", async () => {
    const r = await attack(`
import ctypes
out = []
try:
    lib = ctypes.CDLL(None)
    f = lib.emscripten_run_script_string
    f.restype = ctypes.c_char_p
    out.append(str(f(b"typeof process")))
except BaseException as e:
    out.append("blocked " + type(e).__name__)
return out`);
    // Either the call answers "blocked", or the interpreter died on the missing eval and the
    // worker was retired (the normal call after it ran on a fresh one).
    if (r.ok) expect(returned(r)).not.toContain("object");
    else expect(r.error.kind).toBe("internal");
  });

  it("12 sys.meta_path reset and importlib do not bring js back", async () => {
    const r = await attack(`
import sys, importlib
sys.meta_path[:] = sys.meta_path[::-1]
out = []
for name in ("js", "pyodide_js"):
    try:
        m = importlib.import_module(name)
        out.append((name, str(getattr(m, "process", None))))
    except BaseException as e:
        out.append((name, "blocked"))
return out`);
    expect(returned(r)).not.toContain("object process");
  });

  it("13 the JS finder holds no pyodide_js", async () => {
    const r = await attack(`
try:
    from _pyodide._importhook import jsfinder
    return sorted(str(k) for k in getattr(jsfinder, "jsproxies", {}).keys())
except BaseException as e:
    return ["blocked " + type(e).__name__]`);
    expect(returned(r)).not.toContain("pyodide_js");
  });

  it("14 host files are unreachable (the filesystem is in-memory)", async () => {
    const r = await attack(`
import os
out = {"root": sorted(os.listdir("/"))}
try:
    out["passwd"] = open("/etc/passwd").read()[:20]
except BaseException as e:
    out["passwd"] = "blocked"
try:
    out["work"] = os.listdir("/work")
except BaseException as e:
    out["work"] = "blocked"
return out`);
    const text = returned(r);
    expect(text).toContain('"passwd":"blocked"');
    expect(text).toContain('"work":"blocked"');
  });

  it("15 threads are refused with a clear error", async () => {
    const r = await attack(`
import threading
try:
    threading.Thread(target=print).start()
    return "started"
except Exception as e:
    return str(e)`);
    expect(returned(r)).toContain("threads are not available");
  });

  it("16 the JS error of a failed bridge call does not lead to Function either", async () => {
    const r = await attack(`
import _toolstore_host
try:
    _toolstore_host.fetch(None, None, None).x.y
except BaseException as e:
    js = getattr(e, "js_error", None)
    try:
        return str(js.constructor.constructor("return process")())
    except BaseException as e2:
        return "blocked " + type(e2).__name__
return "no error"`);
    expect(returned(r)).not.toContain("object process");
  });
});

describe("[HOSTILE-PY] time, memory, output", { timeout: 120_000 }, () => {
  it("17 while True is interrupted at the toolset's timeout", async () => {
    const r = await attack("while True:\n    pass", { timeoutMs: 1500 });
    expect(r).toMatchObject({ ok: false, error: { kind: "timeout" } });
  });

  it("18 a loop that catches BaseException (ignores the interrupt) is terminated", async () => {
    const r = await attack(
      `
while True:
    try:
        while True:
            pass
    except BaseException:
        pass`,
      { timeoutMs: 1500 },
    );
    expect(r).toMatchObject({ ok: false, error: { kind: "timeout" } });
  });

  it("19 a C-level loop (catastrophic regex) is terminated", async () => {
    const r = await attack(`import re\nreturn bool(re.match(r"(a+)+$", "a" * 40 + "!"))`, {
      timeoutMs: 1500,
    });
    expect(r).toMatchObject({ ok: false, error: { kind: "timeout" } });
  });

  it("20 a one-shot allocation bomb is a MemoryError under the hard cap", async () => {
    const r = await attack("x = bytearray(1 << 30)\nreturn len(x)");
    expect(r).toMatchObject({ ok: false, error: { kind: "out_of_memory" } });
  });

  it("21 a growing allocation bomb is stopped by the cap", async () => {
    const r = await attack('chunks = []\nwhile True:\n    chunks.append("x" * (1 << 20))');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(["out_of_memory", "internal"]).toContain(r.error.kind);
  });

  it("22 a memory bomb that catches MemoryError still ends at the timeout", async () => {
    const r = await attack(
      `
chunks = []
while True:
    try:
        chunks.append(bytearray(1 << 22))
    except BaseException:
        chunks = chunks[: len(chunks) // 2]`,
      { timeoutMs: 2000 },
    );
    expect(r.ok).toBe(false);
  });

  it("23 infinite recursion is a RecursionError", async () => {
    const r = await attack("def r(n):\n    return r(n + 1)\nreturn r(0)");
    expect(r).toMatchObject({ ok: false, error: { kind: "threw" } });
    if (!r.ok) expect(r.error.message).toContain("RecursionError");
  });

  it("24 deeply nested JSON (recursion in C) fails cleanly", async () => {
    const r = await attack('import json\nreturn json.loads("[" * 200000 + "]" * 200000)');
    expect(r.ok).toBe(false);
  });

  it("25 a huge result is refused by the result size limit", async () => {
    const r = await attack('return "x" * (4 * 1024 * 1024)');
    expect(r).toMatchObject({ ok: false, error: { kind: "threw" } });
    if (!r.ok) expect(r.error.message).toContain("larger than the limit");
  });

  it("26 huge print output is cut, the call still answers", async () => {
    const r = await attack('for i in range(20000):\n    print("y" * 500)\nreturn "done"');
    expect(r).toMatchObject({ ok: true, value: "done" });
    const chars = r.logs.reduce((n, l) => n + l.text.length, 0);
    expect(chars).toBeLessThan(80 * 1024);
  });

  it("27 a result that is not JSON says what to return", async () => {
    const r = await attack("return object()");
    expect(r).toMatchObject({ ok: false, error: { kind: "threw" } });
    if (!r.ok) expect(r.error.message).toContain("not JSON");
  });

  it("28 sys.exit and os._exit do not take the runtime down", async () => {
    const a = await attack("import sys\nsys.exit(3)");
    expect(a.ok).toBe(false);
    const b = await attack("import os\nos._exit(3)");
    expect(b.ok).toBe(false);
  });

  it("29 the module never loads: a toolset.py that loops at import time is stopped", async () => {
    const code =
      "from toolstore.toolset import tool\nwhile True:\n    pass\n\n@tool('read')\ndef ok() -> int:\n    return 42\n";
    const r = await call(code, "ok", "import-loop@1", 1500);
    expect(r).toMatchObject({ ok: false, error: { kind: "timeout" } });
  });
});

describe("[HOSTILE-PY] one trust domain per toolset", { timeout: 120_000 }, () => {
  it("30 monkey-patching json, builtins and httpx in one toolset does not reach another", async () => {
    // (The evil toolset breaks its own interpreter; that is its own trust domain.)
    const patched = await call(
      toolset(`
import json, builtins, httpx, os
json.dumps = lambda *a, **k: '"hacked"'
builtins.len = lambda x: -1
httpx.get = lambda *a, **k: "hacked"
os.environ["STOLEN"] = "yes"
return "patched"`),
      "attack",
      "evil@1",
    );
    expect(patched).toMatchObject({ ok: true, value: "patched" });
    const victim = toolset(`
import json, httpx, os
return {"dumps": json.dumps([1]), "len": len([1, 2]), "get": httpx.get.__name__, "env": dict(os.environ)}`);
    const r = await call(victim, "attack", "victim@1");
    expect(r).toMatchObject({
      ok: true,
      value: { dumps: "[1]", len: 2, get: "get", env: { TOOLSET_VAR: "mine" } },
    });
  });

  it("31 a toolset cannot see another toolset's module or registry", async () => {
    await call(toolset('return "x"'), "ok", "first@1");
    const r = await call(
      toolset(`
import sys, toolstore.toolset as t
return {"names": t.get_tool_names(), "first_loaded": "first" in str(sys.modules.get("toolset"))}`),
      "attack",
      "second@1",
    );
    expect(r).toMatchObject({ ok: true, value: { names: ["attack", "ok"] } });
    const domains = python.stats().domains;
    expect(new Set(domains).size).toBe(domains.length);
  });

  it("33 every call of a warm interpreter starts from a fresh toolset module", async () => {
    const code = `from toolstore.toolset import tool
import os
calls = 0
seen_at_import = os.environ.get("TOOLSET_VAR")

@tool("read")
def count() -> dict:
    global calls
    calls += 1
    return {"calls": calls, "env_at_import": seen_at_import}
`;
    const first = await call(code, "count", "fresh@1");
    const second = await call(code, "count", "fresh@1");
    expect(first).toMatchObject({ ok: true, value: { calls: 1, env_at_import: "mine" } });
    expect(second).toMatchObject({ ok: true, value: { calls: 1, env_at_import: "mine" } });
  });

  it("32 httpx reaches no host outside the allow-list (and no file: URL)", async () => {
    const r = await attack(`
import httpx
out = []
for url in ("http://127.0.0.1:1/", "file:///etc/passwd", "http://169.254.169.254/latest"):
    try:
        httpx.get(url)
        out.append("reached " + url)
    except Exception as e:
        out.append(type(e).__name__)
return out`);
    expect(returned(r)).not.toContain("reached");
    expect(returned(r)).toContain("ConnectError");
  });
});
