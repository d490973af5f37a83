/**
 * The one seam for sources of capabilities. A source (toolsets, external MCP servers, skills,
 * the next one) lives in its own folder under server/modules and is registered by one line in
 * ./index.ts; the composition root (server/engine) builds every registered plug-in with the same
 * context and hands what it returns to the engine. Nothing else names a source.
 */
import type { AssetStore, CatalogSource, ModuleFactory, ModuleSource } from "../core/capabilities/ports";
import type { Category, Session } from "../core/capabilities/types";
import type { LibraryModule } from "../core/libraries/types";
import type { PythonRuntime } from "../core/python/runtime";
import type { BindingRuntimes } from "../core/sandbox/binding-runtime";
import type { SandboxPool } from "../core/sandbox/pool";
import type { Db } from "../db";

/** What every plug-in is built with: the process's shared parts, never a global. */
export interface SourceContext {
  db: Db;
  assets: AssetStore;
  pool: SandboxPool;
  python: PythonRuntime;
  /** The toolset languages' binding runtimes (the QuickJS pool is `typescript`). */
  runtimes: BindingRuntimes;
  /** The engine's default action deadline, for sources that run nested actions. */
  actionTimeoutMs?: number;
  /** Modules the session mounts, by name with their export names (nested actions import them). */
  mountedModules(session: Session): Promise<Record<string, string[]>>;
}

/** What a built plug-in gives the engine; every part is optional. */
export interface SourceParts {
  /** Module sets that change at run time (rows in the database, upstream servers). */
  moduleSources?: ModuleSource[];
  /** Fixed modules, built once with the engine's catalog and asset store. */
  modules?: ModuleFactory[];
  /** Library modules (`toolstore/lib/<name>`): pure, no run, no gate. */
  libraries?: LibraryModule[];
  /** Entries of `store.list` / `search` / `info` that are not modules. */
  catalogSources?: CatalogSource[];
  /** Release processes and connections when the engine closes. */
  close?(): Promise<void>;
}

/** A capability whose category waits for an admin, as the one review flow lists it. */
export interface ReviewItem {
  /** Wire name `module.export`. */
  capability: string;
  /** The plug-in that owns it (its id). */
  source: string;
  /** The version the proposal is for; an accept names it and is refused once it changed. */
  hash: string;
  /** The category the gate uses now; null while the capability cannot be mounted. */
  current: Category | null;
  /** The category the code declares or the upstream's annotations suggest; null: none. */
  proposed: Category | null;
  /** Why it waits, in words for the console and the CLI. */
  reason: string;
}

export interface AcceptReviewInput {
  capability: string;
  hash: string;
  category: Category;
  reason: string;
}

/** A plug-in's part of the one category-review flow (server/services/category-review.ts). */
export interface CategoryReviewPart {
  pending(db: Db): Promise<ReviewItem[]>;
  /**
   * Sets the category of a capability at the version the admin saw. Throws CONFLICT when the
   * version changed since, NOT_FOUND when the capability is not this source's or not pending.
   */
  accept(db: Db, userId: string | null, input: AcceptReviewInput): Promise<void>;
}

export interface SourcePlugin<Id extends string = string, Instance extends SourceParts = SourceParts> {
  /** The plug-in's name in `engine.sources` and in review items: "toolsets", "mcp", "skills". */
  readonly id: Id;
  /** The kind its modules carry (`CapabilityModule.source`, `store.list`'s `source`). */
  readonly kind: string;
  create(context: SourceContext): Instance;
  review?: CategoryReviewPart;
  /** Loads the source's folder when a server starts (`npm start`); returns a one-line summary. */
  loadAtStart?(db: Db, options: { root: string; log: (line: string) => void }): Promise<string>;
}
