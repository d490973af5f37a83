/**
 * The library dispatcher's table — the second dispatcher beside run.invoke. It has no run to give
 * anyone: an action's import of `toolstore/lib/<name>` is checked like any module import (declared
 * library, listed export) and served to the sandbox as source; calls to it are plain guest calls
 * that never reach the host, so they make no gate decision and no audit row.
 */
import { AppError } from "../errors";
import { LIBRARY_PREFIX, type LibraryModule } from "./types";

const NAME = /^[a-z][a-z0-9_-]*$/;
const EXPORT = /^[A-Za-z_$][\w$]*$/;

export interface LibraryTable {
  list(): readonly LibraryModule[];
  /** `lib/<name>` -> export names, for the static import check (every session may import them). */
  mounted(): Record<string, string[]>;
  /** Whether a module key of an import (`lib/yaml`) names a library. */
  isLibrary(moduleKey: string): boolean;
  /** The sources of the imported libraries, by module key; a library that fails to build throws INTERNAL. */
  sources(moduleKeys: readonly string[]): Record<string, string>;
}

export function validateLibrary(library: LibraryModule): void {
  if (!NAME.test(library.name)) {
    throw new AppError("BAD_INPUT", `library name "${library.name}" must match ${NAME}`);
  }
  const seen = new Set<string>();
  for (const e of library.exports) {
    if (!EXPORT.test(e.name))
      throw new AppError("BAD_INPUT", `library export "${library.name}.${e.name}" is not an identifier`);
    if (seen.has(e.name))
      throw new AppError("BAD_INPUT", `library export "${library.name}.${e.name}" is listed twice`);
    seen.add(e.name);
  }
  if (typeof library.source !== "function")
    throw new AppError("BAD_INPUT", `library "${library.name}" has no source`);
}

export function createLibraryTable(libraries: readonly LibraryModule[]): LibraryTable {
  const byKey = new Map<string, LibraryModule>();
  for (const library of libraries) {
    validateLibrary(library);
    const key = LIBRARY_PREFIX + library.name;
    if (byKey.has(key)) throw new AppError("BAD_INPUT", `library "${library.name}" is registered twice`);
    byKey.set(key, library);
  }
  const built = new Map<string, string>();
  return {
    list: () => [...byKey.values()],
    mounted: () => Object.fromEntries([...byKey].map(([key, lib]) => [key, lib.exports.map((e) => e.name)])),
    isLibrary: (key) => byKey.has(key),
    sources(keys) {
      const out: Record<string, string> = {};
      for (const key of keys) {
        const library = byKey.get(key);
        if (!library) continue;
        let source = built.get(key);
        if (source === undefined) {
          try {
            source = library.source();
          } catch (error) {
            throw new AppError("INTERNAL", `library ${key} could not be built: ${(error as Error).message}`);
          }
          built.set(key, source);
        }
        out[key] = source;
      }
      return out;
    },
  };
}
