/**
 * Ports of the capability layer, implemented by the services layer (Prisma, toolsets) or by
 * tests. Types only.
 */
import type { CapabilityModule, Category, JsonSchema, ModuleKind, Session } from "./types";

/**
 * The seam for capability modules whose set changes at run time (toolsets in the database,
 * external MCP servers). The composition root hands the engine a list of them; the engine never
 * names a source. Every export they list still goes through the registry's checks and the gate.
 */
export interface ModuleSource {
  /** For diagnostics: "toolsets", "mcp". */
  readonly id: string;
  /** Current modules. Called when the registry's short cache expires (about 1 s); keep it cheap. */
  listModules(): Promise<CapabilityModule[]>;
  /** Release what the source holds (processes, connections) when the engine closes. */
  close?(): Promise<void>;
}

/** What a module factory may use. The catalog reads the engine's own registry. */
export interface ModuleContext {
  catalog: ToolsetCatalog;
  assets: AssetStore;
}

/**
 * Fixed modules (built-ins, test canaries, `toolstore/skills`) are given to the engine as
 * factories, so a module can depend on the engine's catalog without the engine knowing it.
 */
export type ModuleFactory = (context: ModuleContext) => CapabilityModule[];

/**
 * Effective categories by capability wire name, as stored in the database (the console edits
 * them). A name missing from the map keeps the category its code declares.
 */
export type CategoryLookup = () => Promise<ReadonlyMap<string, string>>;

export interface StoredAsset {
  id: string;
  mime: string;
  width: number;
  height: number;
  createdAt: number;
}

export interface AssetStore {
  save(asset: {
    userId: string | null;
    runId: string | null;
    mime: string;
    width: number;
    height: number;
    bytes: Uint8Array;
    sha256: string;
  }): Promise<{ id: string }>;
  /** Newest first, visible to `userId`. */
  list(query: { userId: string | null; limit: number }): Promise<StoredAsset[]>;
}

export interface CatalogFunction {
  name: string;
  description: string;
  category: Category;
  inputSchema: JsonSchema;
}

/** What `store.list` calls an entry's type: a module kind, or a skill (instructions, not code). */
export type CatalogEntryKind = ModuleKind | "skill";

export interface CatalogEntry {
  /** Module name (`weather` for `toolstore/weather`), or a skill's name. */
  name: string;
  description: string;
  source: CatalogEntryKind;
  /** Callable exports; a skill has none (it is read through `toolstore/skills`). */
  functions: CatalogFunction[];
}

/**
 * Entries of `store.list`/`search`/`info` that are not registry modules (skills). The registry's
 * modules are always listed; these are appended, filtered by the session.
 */
export interface CatalogSource {
  readonly id: string;
  list(session: Session): Promise<Array<CatalogEntry & { doc?: string }>>;
}

/** What the `toolstore/store` module lists, searches and describes. */
export interface ToolsetCatalog {
  list(session: Session): Promise<CatalogEntry[]>;
  search(session: Session, query: string, limit: number): Promise<CatalogEntry[]>;
  /** The definition with the full agent documentation (doc.md); null when unknown or not mounted. */
  info(session: Session, name: string): Promise<(CatalogEntry & { doc: string }) | null>;
}
