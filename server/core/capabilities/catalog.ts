/**
 * The default ToolsetCatalog for `toolstore/store`, read from the registry: every mounted module
 * with its functions, searched by words in names, descriptions and docs. The services layer may
 * provide another (e.g. one that reads doc.md from the current toolset version).
 */
import type { CatalogEntry, ToolsetCatalog } from "./ports";
import type { CapabilityRegistry, RegisteredModule } from "./registry";

function toEntry(module: RegisteredModule): CatalogEntry {
  return {
    name: module.name,
    description: module.description,
    source: module.source,
    functions: module.exports.map((e) => ({
      name: e.exportName,
      description: e.spec.description,
      category: e.spec.category,
      inputSchema: e.spec.inputSchema,
    })),
  };
}

function score(module: RegisteredModule, words: string[]): number {
  const name = module.name.toLowerCase();
  const fields = [
    module.description,
    module.doc ?? "",
    ...module.exports.flatMap((e) => [e.exportName, e.spec.description]),
  ]
    .join("\n")
    .toLowerCase();
  let total = 0;
  for (const word of words) {
    if (name === word) total += 10;
    else if (name.includes(word)) total += 5;
    if (fields.includes(word)) total += 1 + Math.min(3, fields.split(word).length - 2);
    else if (!name.includes(word)) return 0;
  }
  return total;
}

/** `registry` may be a getter, so the catalog can be built before the registry that holds `store`. */
export function createRegistryCatalog(
  source: CapabilityRegistry | (() => CapabilityRegistry),
): ToolsetCatalog {
  const registry = {
    mountedModules: (...args: Parameters<CapabilityRegistry["mountedModules"]>) =>
      (typeof source === "function" ? source() : source).mountedModules(...args),
  };
  return {
    async list(session) {
      return (await registry.mountedModules(session)).map(toEntry);
    },
    async search(session, query, limit) {
      const words = query.toLowerCase().split(/\s+/).filter(Boolean);
      const modules = await registry.mountedModules(session);
      if (words.length === 0) return modules.slice(0, limit).map(toEntry);
      return modules
        .map((m) => ({ m, s: score(m, words) }))
        .filter((x) => x.s > 0)
        .sort((a, b) => b.s - a.s || a.m.name.localeCompare(b.m.name))
        .slice(0, limit)
        .map((x) => toEntry(x.m));
    },
    async info(session, name) {
      const module = (await registry.mountedModules(session)).find((m) => m.name === name);
      if (!module) return null;
      return { ...toEntry(module), doc: module.doc ?? module.description };
    },
  };
}
