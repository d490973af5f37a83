/**
 * The default ToolsetCatalog for `toolstore/store`, read from the registry: every mounted module
 * with its functions, plus the entries of catalog sources (skills), searched by words in names,
 * descriptions and docs.
 */
import type { CatalogEntry, CatalogSource, ToolsetCatalog } from "./ports";
import type { CapabilityRegistry, RegisteredModule } from "./registry";
import type { Session } from "./types";

type DocEntry = CatalogEntry & { doc?: string };

function toEntry(module: RegisteredModule): DocEntry {
  const entry: DocEntry = {
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
  if (module.doc !== undefined) entry.doc = module.doc;
  return entry;
}

/** The entry without its doc: list and search return definitions, info adds the doc. */
function bare({ doc: _doc, ...entry }: DocEntry): CatalogEntry {
  return entry;
}

function score(entry: DocEntry, words: string[]): number {
  const name = entry.name.toLowerCase();
  const fields = [
    entry.description,
    entry.doc ?? "",
    ...entry.functions.flatMap((f) => [f.name, f.description]),
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

/**
 * `registry` may be a getter, so the catalog can be built before the registry that holds `store`.
 * A catalog source that fails is left out of the answer rather than failing `store.list`.
 */
export function createRegistryCatalog(
  source: CapabilityRegistry | (() => CapabilityRegistry),
  extra: CatalogSource[] = [],
): ToolsetCatalog {
  const registry = () => (typeof source === "function" ? source() : source);
  async function entries(session: Session): Promise<DocEntry[]> {
    const modules = (await registry().mountedModules(session)).map(toEntry);
    const more = await Promise.allSettled(extra.map((s) => s.list(session)));
    const taken = new Set(modules.map((m) => m.name));
    for (const result of more) {
      if (result.status !== "fulfilled") continue;
      for (const entry of result.value) if (!taken.has(entry.name)) modules.push(entry);
    }
    return modules;
  }
  return {
    async list(session) {
      return (await entries(session)).map(bare);
    },
    async search(session, query, limit) {
      const words = query.toLowerCase().split(/\s+/).filter(Boolean);
      const all = await entries(session);
      if (words.length === 0) return all.slice(0, limit).map(bare);
      return all
        .map((e) => ({ e, s: score(e, words) }))
        .filter((x) => x.s > 0)
        .sort((a, b) => b.s - a.s || a.e.name.localeCompare(b.e.name))
        .slice(0, limit)
        .map((x) => bare(x.e));
    },
    async info(session, name) {
      const entry = (await entries(session)).find((e) => e.name === name);
      if (!entry) return null;
      return { ...bare(entry), doc: entry.doc ?? entry.description };
    },
  };
}
