/**
 * The process's Python runtime (Pyodide workers), shared by the engine (binding calls) and by
 * publishing (toolset.py is parsed with Python's ast in the same sandboxed workers). Created on
 * first use, kept on globalThis like the Prisma client; workers start lazily, and an idle worker
 * never keeps the process alive.
 */

import { createPythonRuntime, type PythonRuntime } from "../core/python/runtime";
import { loadEnv } from "../env";
import { processSingleton } from "../infra/process-singletons";

export function getPythonRuntime(): PythonRuntime {
  return processSingleton("python", () =>
    createPythonRuntime({ hostAliases: loadEnv().TOOLSTORE_EGRESS_ALIASES }),
  );
}

/** Parses toolset.py for validation and publishing. */
export function parsePythonToolset(source: string) {
  return getPythonRuntime().parse(source);
}
