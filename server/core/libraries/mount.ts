/**
 * Where libraries meet an action: the static check sees them beside the session's capability
 * modules (every session may import every library), and the pool gets the imported ones as
 * sources, apart from the capability facades (whose every call goes to run.invoke).
 */
import type { LibraryTable } from "./library-table";

/** The mounted map of the static check: the session's capability modules plus every library. */
export function withLibraries(
  mounted: Record<string, string[]>,
  libraries: LibraryTable | undefined,
): Record<string, string[]> {
  return libraries ? { ...mounted, ...libraries.mounted() } : mounted;
}

/** The action's imports split into capability modules (facades) and library sources. */
export function splitImports(
  imports: Record<string, string[]>,
  mounted: Record<string, string[]>,
  libraries: LibraryTable | undefined,
): { modules: Record<string, string[]>; libraries?: Record<string, string> } {
  const modules: Record<string, string[]> = {};
  const libs: string[] = [];
  for (const name of Object.keys(imports)) {
    if (libraries?.isLibrary(name)) libs.push(name);
    else modules[name] = mounted[name] ?? [];
  }
  return libs.length && libraries ? { modules, libraries: libraries.sources(libs) } : { modules };
}
