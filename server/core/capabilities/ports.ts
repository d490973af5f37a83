/**
 * Ports of the capability layer, implemented by the services layer (Prisma, toolsets) or by
 * tests. Types only.
 */
import type { CapabilityModule, Category, JsonSchema, Session } from "./types";

/** A pluggable provider of capability modules (toolsets in the database, external MCP servers). */
export interface ModuleSource {
  /** For diagnostics: "toolsets", "mcp:github". */
  readonly id: string;
  /** Current modules. Called when the registry's short cache expires; keep it cheap. */
  listModules(): Promise<CapabilityModule[]>;
}

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

export interface CatalogEntry {
  /** Module name: `weather` for `toolstore/weather`. */
  name: string;
  description: string;
  source: CapabilityModule["source"];
  functions: CatalogFunction[];
}

/** What the `toolstore/store` module lists, searches and describes. */
export interface ToolsetCatalog {
  list(session: Session): Promise<CatalogEntry[]>;
  search(session: Session, query: string, limit: number): Promise<CatalogEntry[]>;
  /** The definition with the full agent documentation (doc.md); null when unknown or not mounted. */
  info(session: Session, name: string): Promise<(CatalogEntry & { doc: string }) | null>;
}
