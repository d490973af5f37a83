/**
 * Every module ToolStore ships, for tests that pin what agents and the editor are shown: the
 * built-ins and the example toolsets under toolsets/ (compiled, never run).
 */
import path from "node:path";
import type { TypingsModule } from "../actions/module-typings";
import { createBuiltinModules } from "../capabilities/builtins";
import type { CapabilityModule } from "../capabilities/types";
import { compileToolset } from "../toolsets/compile-toolset";
import { listToolsetFolders, readToolsetFolder } from "../toolsets/read-toolset-folder";
import type { CompiledToolset } from "../toolsets/types";
import { createMemoryPorts } from "./memory-ports";

/** What ToolStore ships: the built-in modules, then the example toolsets. */
export const SHIPPED_MODULE_NAMES = [
  "store",
  "assets",
  "http",
  "run",
  "ui",
  "calculator",
  "chart",
  "lisp",
  "units",
  "weather",
  "webhook",
] as const;

export const SHIPPED_TOOLSETS_DIR = path.resolve(import.meta.dirname, "../../../toolsets");

export function shippedBuiltins(): CapabilityModule[] {
  return createBuiltinModules({
    catalog: { list: async () => [], search: async () => [], info: async () => null },
    assets: createMemoryPorts().assets,
    http: { allowedHosts: [] },
  });
}

/**
 * The TypeScript example toolsets. Python ones (toolsets/textkit) are parsed by Python's `ast` in a
 * Pyodide worker, which this synchronous helper cannot start; their schemas go through the same
 * renderer and are pinned by the Python toolset tests.
 */
export function shippedToolsets(): CompiledToolset[] {
  const folders = listToolsetFolders(SHIPPED_TOOLSETS_DIR).map((dir) => readToolsetFolder(dir));
  return folders
    .filter((input) => input.files.language !== "python")
    .map((input) => {
      return compileToolset(
        { ...input, files: { doc: input.files.doc ?? "", source: input.files.source ?? "" } },
        { typecheck: false },
      );
    });
}

/** Built-ins then toolsets, in the shape the renderers take. */
export function shippedTypingsModules(): TypingsModule[] {
  return [
    ...shippedBuiltins().map((m) => ({
      name: m.name,
      description: m.description,
      exports: m.exports.map((e) => ({ exportName: e.spec.name.slice(m.name.length + 1), spec: e.spec })),
    })),
    ...shippedToolsets().map((t) => ({
      name: t.name,
      description: t.description,
      exports: t.bindings.map((b) => ({ exportName: b.name, spec: b })),
    })),
  ];
}
