# ToolStore's Python side of a Pyodide worker. The host prepends `_SOURCES = {...}` (module name ->
# source) and runs this once, after the JavaScript lockdown and before any toolset code.
import ast
import builtins
import json
import os
import sys
import traceback
import types


def _install(name, source):
    module = types.ModuleType(name)
    module.__file__ = f"<toolstore>/{name.replace('.', '/')}.py"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


_pkg = types.ModuleType("toolstore")
_pkg.__path__ = []
_pkg.__file__ = "<toolstore>/toolstore/__init__.py"
sys.modules["toolstore"] = _pkg
_pkg.toolset = _install("toolstore.toolset", _SOURCES["toolstore.toolset"])
_install("httpx", _SOURCES["httpx"])


# --- clear errors for what a toolset cannot do --------------------------------------------------

def _no_subprocess(*args, **kwargs):
    raise PermissionError("subprocesses are not available in a ToolStore toolset (no os.system, subprocess, fork)")


def _no_threads(*args, **kwargs):
    raise RuntimeError("threads are not available in a ToolStore toolset; do the work in the call itself")


def _no_sockets(*args, **kwargs):
    raise PermissionError(
        "sockets are not available in a ToolStore toolset; use httpx (import httpx) to reach a host the toolset declares"
    )


for _name in ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "execl", "execle",
              "execlp", "execlpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp",
              "spawnvpe", "posix_spawn", "posix_spawnp", "kill", "killpg"):
    if hasattr(os, _name):
        setattr(os, _name, _no_subprocess)

import subprocess as _subprocess  # noqa: E402

for _name in ("Popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput"):
    setattr(_subprocess, _name, _no_subprocess)

import _thread  # noqa: E402
import threading as _threading  # noqa: E402

_thread.start_new_thread = _no_threads
_thread.start_new = _no_threads
_threading.Thread.start = _no_threads
_threading._start_new_thread = _no_threads

import socket as _socket  # noqa: E402


class _NoSocket:
    def __init__(self, *args, **kwargs):
        _no_sockets()


_socket.socket = _NoSocket
_socket.SocketType = _NoSocket
for _name in ("create_connection", "create_server", "getaddrinfo", "gethostbyname", "gethostbyname_ex",
              "socketpair", "fromfd"):
    if hasattr(_socket, _name):
        setattr(_socket, _name, _no_sockets)

import urllib.request as _urllib_request  # noqa: E402


def _no_urlopen(*args, **kwargs):
    raise PermissionError("urllib cannot reach the network in a ToolStore toolset; use httpx (import httpx)")


_urllib_request.urlopen = _no_urlopen
del _name

# --- parsing: ast only, the file is never run ---------------------------------------------------

_CATEGORIES = ("read", "write", "execute", "external")
_HINT_HELP = (
    "write one of str, int, float, bool, list[T], dict[str, T], Optional[T] or T | None, "
    "Literal[\"a\", \"b\"], or a TypedDict class defined in toolset.py"
)


class _Unsupported(Exception):
    def __init__(self, node, message, hint=_HINT_HELP):
        super().__init__(message)
        self.node = node
        self.hint = hint


def _dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class _Parser:
    def __init__(self, source):
        self.source = source
        self.diagnostics = []
        self.tool_names = set()
        self.typing_names = {}  # local name -> typing name (Optional, List, ...)
        self.typing_modules = {"typing", "typing_extensions"}
        self.typeddicts = {}

    def report(self, node, message, hint=None, severity="error"):
        d = {"severity": severity, "message": message}
        if node is not None and hasattr(node, "lineno"):
            d["line"] = node.lineno
            d["column"] = node.col_offset + 1
        if hint:
            d["hint"] = hint
        self.diagnostics.append(d)

    def seg(self, node):
        return ast.get_source_segment(self.source, node) or ast.unparse(node)

    def typing_name(self, node):
        """`Optional` / `typing.Optional` / `t.Optional` -> "Optional"; None when not from typing."""
        name = _dotted(node)
        if name is None:
            return None
        if name in self.typing_names:
            return self.typing_names[name]
        head, _, tail = name.rpartition(".")
        if head in self.typing_modules:
            return tail
        return None

    def collect_imports(self, tree):
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                if node.module == "toolstore.toolset":
                    for a in node.names:
                        if a.name == "tool":
                            self.tool_names.add(a.asname or "tool")
                elif node.module == "toolstore":
                    for a in node.names:
                        if a.name == "toolset":
                            self.tool_names.add(f"{a.asname or 'toolset'}.tool")
                elif node.module in ("typing", "typing_extensions"):
                    for a in node.names:
                        self.typing_names[a.asname or a.name] = a.name
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "toolstore.toolset":
                        self.tool_names.add(f"{a.asname}.tool" if a.asname else "toolstore.toolset.tool")
                    elif a.name in ("typing", "typing_extensions"):
                        self.typing_modules.add(a.asname or a.name)
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(self.typing_name(b) == "TypedDict" for b in node.bases):
                self.typeddicts[node.name] = node

    def schema(self, node, depth=0):
        if depth > 16:
            raise _Unsupported(node, "type hint nests too deeply")
        if node is None:
            return {}
        if isinstance(node, ast.Constant):
            if node.value is None:
                return {"type": "null"}
            if isinstance(node.value, str):
                try:
                    inner = ast.parse(node.value, mode="eval").body
                except SyntaxError:
                    raise _Unsupported(node, f"type hint {node.value!r} is not a type")
                return self.schema(inner, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.union([node.left, node.right], depth)
        name = _dotted(node) if not isinstance(node, ast.Subscript) else None
        simple = {"str": {"type": "string"}, "int": {"type": "integer"}, "float": {"type": "number"},
                  "bool": {"type": "boolean"}, "list": {"type": "array"}, "dict": {"type": "object"},
                  "None": {"type": "null"}}
        if name in simple:
            return dict(simple[name])
        if name is not None:
            t = self.typing_name(node)
            if t == "Any":
                return {}
            if t in ("List", "Sequence"):
                return {"type": "array"}
            if t in ("Dict", "Mapping"):
                return {"type": "object"}
            if name in self.typeddicts:
                return self.typeddict(self.typeddicts[name], depth)
            raise _Unsupported(node, f"type hint `{self.seg(node)}` is not supported")
        if isinstance(node, ast.Subscript):
            base = _dotted(node.value)
            t = self.typing_name(node.value) or base
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if t in ("list", "List", "Sequence") and len(args) == 1:
                return {"type": "array", "items": self.schema(args[0], depth + 1)}
            if t in ("dict", "Dict", "Mapping") and len(args) == 2:
                key = self.schema(args[0], depth + 1)
                if key != {"type": "string"}:
                    raise _Unsupported(args[0], "dict keys must be str (JSON object keys are strings)",
                                       "write dict[str, T]")
                return {"type": "object", "additionalProperties": self.schema(args[1], depth + 1)}
            if t == "Optional" and len(args) == 1:
                return self.union([args[0], ast.Constant(value=None)], depth)
            if t == "Union":
                return self.union(args, depth)
            if t == "Literal":
                values = []
                for a in args:
                    if not isinstance(a, ast.Constant) or not isinstance(a.value, (str, int, float, bool)) and a.value is not None:
                        raise _Unsupported(a, "Literal[...] takes str, int, float, bool or None values",
                                           "write Literal[\"metric\", \"imperial\"]")
                    values.append(a.value)
                kinds = {type(v) for v in values}
                out = {"enum": values}
                if kinds == {str}:
                    out = {"type": "string", "enum": values}
                elif kinds <= {int}:
                    out = {"type": "integer", "enum": values}
                return out
            if t in ("Annotated",) and args:
                inner = self.schema(args[0], depth + 1)
                for extra in args[1:]:
                    if isinstance(extra, ast.Constant) and isinstance(extra.value, str):
                        inner["description"] = extra.value
                return inner
            if t in ("Required", "NotRequired") and len(args) == 1:
                return self.schema(args[0], depth + 1)
        raise _Unsupported(node, f"type hint `{self.seg(node)}` is not supported")

    def union(self, members, depth):
        flat = []
        for m in members:
            s = self.schema(m, depth + 1)
            for x in s["anyOf"] if set(s) == {"anyOf"} else [s]:
                if x not in flat:
                    flat.append(x)
        if len(flat) == 1:
            return flat[0]
        types_ = [x.get("type") for x in flat]
        if all(isinstance(t, str) for t in types_) and all(set(x) == {"type"} for x in flat):
            return {"type": types_}
        return {"anyOf": flat}

    def typeddict(self, cls, depth):
        total = True
        for kw in cls.keywords:
            if kw.arg == "total" and isinstance(kw.value, ast.Constant):
                total = bool(kw.value.value)
        props, required = {}, []
        doc = ast.get_docstring(cls)
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                ann = stmt.annotation
                t = self.typing_name(ann.value) if isinstance(ann, ast.Subscript) else None
                props[stmt.target.id] = self.schema(ann, depth + 1)
                if (total and t != "NotRequired") or t == "Required":
                    required.append(stmt.target.id)
        out = {"type": "object", "properties": props, "additionalProperties": False}
        if required:
            out["required"] = required
        if doc:
            out["description"] = doc
        return out

    def decorator_category(self, dec):
        """None when `dec` is not @tool; else (category or None, ok)."""
        target = dec.func if isinstance(dec, ast.Call) else dec
        if _dotted(target) not in self.tool_names:
            return None
        if not isinstance(dec, ast.Call):
            return (None, True)
        category = None
        if dec.args:
            a = dec.args[0]
            if not isinstance(a, ast.Constant) or not isinstance(a.value, str) or len(dec.args) > 1:
                self.report(dec, "@tool takes one category as a string", "write @tool(\"read\") or @tool(category=\"read\")")
                return (None, False)
            category = a.value
        for kw in dec.keywords:
            if kw.arg != "category" or not isinstance(kw.value, ast.Constant) or not isinstance(kw.value.value, str):
                self.report(dec, "@tool takes only category=\"...\"", "write @tool(category=\"read\")")
                return (None, False)
            category = kw.value.value
        if category is not None and category not in _CATEGORIES:
            self.report(dec, f"@tool category must be one of {', '.join(_CATEGORIES)}, got {category!r}",
                        "write @tool(category=\"read\") for code that only reads, \"write\" for changes, "
                        "\"execute\" to run things, \"external\" for effects outside ToolStore")
            return (None, False)
        return (category, True)

    def param_docs(self, doc):
        out = {}
        if not doc:
            return out
        in_args = False
        for line in doc.splitlines():
            stripped = line.strip()
            if stripped.lower() in ("args:", "arguments:", "parameters:", "params:"):
                in_args = True
                continue
            if in_args:
                if not stripped:
                    continue
                if stripped.endswith(":") and " " not in stripped:
                    in_args = False
                    continue
                head, sep, desc = stripped.partition(":")
                name = head.split("(")[0].strip().lstrip("*")
                if sep and name.isidentifier():
                    out[name] = desc.strip()
        return out

    def binding(self, fn, category, pending):
        doc = ast.get_docstring(fn) or ""
        if isinstance(fn, ast.AsyncFunctionDef):
            self.report(fn, f"`{fn.name}` is `async def`; Python toolset bindings run synchronously",
                        f"write `def {fn.name}(...)` (httpx calls are synchronous here)")
            return None
        a = fn.args
        if a.vararg or a.kwarg:
            self.report(a.vararg or a.kwarg, f"`{fn.name}` takes *args or **kwargs; agents pass named arguments",
                        "list every parameter by name, with a type hint")
            return None
        positional = a.posonlyargs + a.args
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        params = list(zip(positional, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
        props, required, names, sig = {}, [], [], []
        docs = self.param_docs(doc)
        ok = True
        for arg, default in params:
            names.append(arg.arg)
            try:
                s = self.schema(arg.annotation) if arg.annotation is not None else {}
            except _Unsupported as e:
                self.report(e.node, f"{e} (parameter `{arg.arg}` of `{fn.name}`)", e.hint)
                ok = False
                continue
            if arg.annotation is None:
                if default is not None and isinstance(default, ast.Constant) and default.value is not None:
                    s = self.schema(ast.Name(id=type(default.value).__name__))
                self.report(arg, f"parameter `{arg.arg}` of `{fn.name}` has no type hint; agents may pass any JSON value",
                            f"write e.g. `{arg.arg}: str`", severity="warning")
            text = arg.arg + (f": {self.seg(arg.annotation)}" if arg.annotation is not None else "")
            if default is not None:
                try:
                    value = ast.literal_eval(default)
                    json.dumps(value)
                    s["default"] = value
                except Exception:
                    self.report(default, f"the default of `{arg.arg}` is not a literal; it is not shown to agents",
                                "use a constant default (a string, number, bool, None, list or dict)", severity="warning")
                text += f" = {self.seg(default)}"
            else:
                required.append(arg.arg)
            if arg.arg in docs and "description" not in s:
                s["description"] = docs[arg.arg]
            props[arg.arg] = s
            sig.append(text)
        if not ok:
            return None
        schema = {"type": "object", "properties": props, "additionalProperties": False}
        if required:
            schema["required"] = required
        returns = f" -> {self.seg(fn.returns)}" if fn.returns is not None else ""
        first = doc.strip().split("\n\n")[0].strip() if doc else ""
        if not doc:
            self.report(fn, f"`{fn.name}` has no docstring; agents see no description",
                        f"write a docstring: \"\"\"What {fn.name} does and returns.\"\"\"", severity="warning")
        return {
            "name": fn.name,
            "description": " ".join(first.split()),
            "category": category or "execute",
            "categoryPending": pending,
            "inputSchema": schema,
            "params": names,
            "signature": f"{fn.name}({', '.join(sig)}){returns}",
            "async": False,
            "line": fn.lineno,
        }

    def run(self):
        try:
            tree = ast.parse(self.source, filename="toolset.py")
        except SyntaxError as e:
            d = {"severity": "error", "message": f"syntax error: {e.msg}", "line": e.lineno or 1}
            if e.offset:
                d["column"] = e.offset
            self.diagnostics.append(d)
            return {"bindings": [], "diagnostics": self.diagnostics, "moduleDoc": "", "moduleDocLine": 1}
        self.collect_imports(tree)
        bindings = []
        seen = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node not in tree.body:
                if any(self.decorator_category(d) is not None for d in node.decorator_list):
                    self.report(node, f"@tool on `{node.name}`, which is not a top-level function",
                                "put @tool functions at the top level of toolset.py")
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            marks = [(d, self.decorator_category(d)) for d in node.decorator_list]
            marks = [(d, m) for d, m in marks if m is not None]
            if not marks:
                continue
            if len(node.decorator_list) > 1:
                self.report(node, f"`{node.name}` has other decorators besides @tool; the schema may not match what runs",
                            "keep @tool as the only decorator of a binding", severity="warning")
            dec, (category, ok) = marks[0]
            if not ok:
                continue
            if node.name.startswith("_"):
                self.report(node, f"binding names may not start with `_`: `{node.name}`", "rename the function")
                continue
            if node.name in seen:
                self.report(node, f"`{node.name}` is defined twice (first on line {seen[node.name]})", "rename one of them")
                continue
            seen[node.name] = node.lineno
            pending = category is None
            if pending:
                self.report(dec, f"`{node.name}` has no category: it stays pending (asked like `execute`) until an admin sets one in the console",
                            f"write @tool(category=\"read\") (or \"write\", \"execute\", \"external\") above `{node.name}`, or set it under Capabilities",
                            severity="warning")
            b = self.binding(node, category, pending)
            if b is not None:
                bindings.append(b)
        module_doc = ast.get_docstring(tree, clean=True) or ""
        first = tree.body[0] if tree.body else None
        return {"bindings": bindings, "diagnostics": self.diagnostics, "moduleDoc": module_doc,
                "moduleDocLine": first.lineno if first is not None else 1,
                "importsTool": bool(self.tool_names)}


# --- calls --------------------------------------------------------------------------------------

_json_dumps = json.dumps
_state = {"code": None, "compiled": None, "error": None}


def _load(code):
    """Compiles toolset.py once per version; each call then runs it afresh (_fresh_module)."""
    _state["code"] = code
    _state["compiled"] = None
    _state["error"] = None
    try:
        _state["compiled"] = compile(code, "toolset.py", "exec")
    except BaseException as e:  # noqa: BLE001 - reported to the caller, the worker stays usable
        _state["error"] = _describe(e, "toolset.py failed to load: ")


def _fresh_module():
    """A new `toolset` module for one call: its module-level state never outlives the call."""
    import toolstore.toolset as registry
    registry.clear_registry()
    module = types.ModuleType("toolset")
    module.__file__ = "toolset.py"
    sys.modules["toolset"] = module
    exec(_state["compiled"], module.__dict__)


def _describe(e, prefix="", filename="toolset.py"):
    if isinstance(e, MemoryError):
        who = "the toolset" if filename == "toolset.py" else filename
        return {"ok": False, "kind": "out_of_memory", "message": f"{prefix}MemoryError: {who} ran out of memory"}
    if isinstance(e, KeyboardInterrupt):
        return {"ok": False, "kind": "interrupted", "message": "interrupted"}
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == filename]
    where = f" ({filename}:{frames[-1].lineno})" if frames else ""
    text = str(e)
    if len(text) > 2000:
        text = text[:2000] + "…"
    return {"ok": False, "kind": "threw", "name": type(e).__name__,
            "message": f"{prefix}{type(e).__name__}: {text}{where}"}


def _run_script(code, request, max_result):
    """A skill's .py script: `def main(input)` returning a JSON value; run fresh on every call."""
    filename = request["script"]
    module = types.ModuleType("skill_script")
    module.__file__ = filename
    os.environ.clear()
    try:
        exec(compile(code, filename, "exec"), module.__dict__)
    except BaseException as e:  # noqa: BLE001
        return _describe(e, f"{filename} failed to load: ", filename)
    fn = module.__dict__.get("main")
    if not callable(fn):
        return {"ok": False, "kind": "threw",
                "message": f"{filename} has no main function; write `def main(input):` returning a JSON value"}
    try:
        value = fn(request.get("input"))
        if isinstance(value, types.CoroutineType):
            value.close()
            return {"ok": False, "kind": "threw", "message": f"main in {filename} is async; write it as a plain def"}
        text = _json_dumps(value, ensure_ascii=False, default=_default)
    except BaseException as e:  # noqa: BLE001
        return _describe(e, "", filename)
    if len(text) > max_result:
        return {"ok": False, "kind": "threw",
                "message": f"the result is larger than the limit of {max_result} characters ({len(text)}); return less"}
    return {"ok": True, "json": text}


def _call(code, request_json, max_result):
    request = json.loads(request_json)
    if request.get("script"):
        return _run_script(code, request, max_result)
    if _state["code"] != code:
        _load(code)
    if _state["error"]:
        return _state["error"]
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in (request.get("env") or {}).items()})
    try:
        _fresh_module()
    except BaseException as e:  # noqa: BLE001 - reported to the caller, the worker stays usable
        return _describe(e, "toolset.py failed to load: ")
    import toolstore.toolset as registry
    fn = registry.get_tool(request["function"])
    if fn is None:
        return {"ok": False, "kind": "threw", "message": f"toolset.py has no @tool function `{request['function']}`"}
    try:
        value = fn(**(request.get("kwargs") or {}))
        if isinstance(value, types.CoroutineType):
            value.close()
            return {"ok": False, "kind": "threw", "message": f"`{request['function']}` returned a coroutine; write it as a plain def"}
        text = _json_dumps(value, ensure_ascii=False, default=_default)
    except BaseException as e:  # noqa: BLE001
        return _describe(e)
    if len(text) > max_result:
        return {"ok": False, "kind": "threw",
                "message": f"the result is larger than the limit of {max_result} characters ({len(text)}); return less"}
    return {"ok": True, "json": text}


def _default(value):
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"the result holds a {type(value).__name__}, which is not JSON; return dicts, lists, str, numbers, bool or None")


def _toolstore_entry(mode, source, request_json, max_result):
    try:
        if mode == "parse":
            out = _Parser(source).run()
        else:
            out = _call(source, request_json, max_result)
        return _json_dumps(out)
    except BaseException as e:  # noqa: BLE001
        return _json_dumps(_describe(e))


for _n in ("_install", "_pkg"):
    globals().pop(_n, None)
del _n
