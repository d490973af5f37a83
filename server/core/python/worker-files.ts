/**
 * The files a Python worker needs: worker.mjs, the Pyodide package, and the Python bootstrap
 * (py/bootstrap.py with the `toolstore.toolset` and `httpx` sources it installs), found next to
 * this file or under the cwd (a bundled server has no file URL).
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve as resolvePath } from "node:path";
import { fileURLToPath } from "node:url";

function here(): string | undefined {
  try {
    return dirname(fileURLToPath(import.meta.url));
  } catch {
    return undefined;
  }
}

export function findPythonFile(relative: string): string {
  const dir = here();
  const candidates = [
    ...(dir ? [join(dir, relative)] : []),
    resolvePath(process.cwd(), "server/core/python", relative),
  ];
  const found = candidates.find((p) => existsSync(p));
  if (!found)
    throw new Error(`python runtime file ${relative} not found (looked in ${candidates.join(", ")})`);
  return found;
}

export function findPyodideDir(): string {
  try {
    return dirname(createRequire(import.meta.url).resolve("pyodide/package.json"));
  } catch {
    const local = resolvePath(process.cwd(), "node_modules/pyodide");
    if (existsSync(join(local, "pyodide.mjs"))) return local;
    throw new Error("the pyodide package is not installed (npm install)");
  }
}

let bootstrapSource: string | undefined;
export function pythonBootstrap(): string {
  if (bootstrapSource) return bootstrapSource;
  const sources = {
    "toolstore.toolset": readFileSync(findPythonFile("py/toolset.py"), "utf8"),
    httpx: readFileSync(findPythonFile("py/httpx.py"), "utf8"),
  };
  bootstrapSource = `_SOURCES = ${JSON.stringify(sources)}\n${readFileSync(findPythonFile("py/bootstrap.py"), "utf8")}`;
  return bootstrapSource;
}
