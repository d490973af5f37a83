/**
 * A toolset's compiled module as a factory, so that a warm context still gives every call fresh
 * state. The module's code is rewritten once (esbuild, ES module to CommonJS) into the body of one
 * exported function; the worker evaluates that module once per context, and each call runs the
 * factory, which runs the toolset's top level again: its module-level variables start over, with
 * no new parse. Globals are the other state a call could leave behind: the worker keeps a context
 * warm only if the call left `globalThis` and the built-ins as they were (worker-main.ts).
 */
import { createRequire } from "node:module";
import path from "node:path";

import { FACTORY_EXPORT } from "./guest-sources";

const MAX_FACTORIES = 200;
const factories = new Map<string, string>();

/**
 * The factory module for a toolset's module code. Code esbuild cannot rewrite (top-level await)
 * is returned as it is: it still runs, and the worker never keeps its context warm.
 */
export function bindingFactorySource(code: string): string {
  const hit = factories.get(code);
  if (hit !== undefined) return hit;
  let source = code;
  try {
    // Loaded at run time, so the Next build never bundles esbuild's native binary.
    const require = createRequire(path.join(process.cwd(), "package.json"));
    const esbuild = require("esbuild") as typeof import("esbuild");
    const cjs = esbuild.transformSync(code, { format: "cjs", target: "es2023", logLevel: "silent" }).code;
    source = `export function ${FACTORY_EXPORT}() {\nconst module = { exports: {} };\nconst exports = module.exports;\n${cjs}\nreturn module.exports;\n}\n`;
  } catch {
    // As it is: see above.
  }
  if (factories.size >= MAX_FACTORIES) factories.clear();
  factories.set(code, source);
  return source;
}
