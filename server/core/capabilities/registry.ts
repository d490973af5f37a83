/**
 * The capability registry: built-in modules plus modules from pluggable sources (toolsets in
 * the database, external MCP servers), each export with its EFFECTIVE category (the database's
 * value when the category lookup has one, else the category its code declares). A module or
 * export without a valid category is never mounted. Source results are cached briefly.
 */
import { AppError } from "../errors";
import { didYouMean } from "./did-you-mean";
import type { CategoryLookup, ModuleSource } from "./ports";
import {
  CATEGORIES,
  type CapabilityImpl,
  type CapabilityModule,
  type CapabilitySpec,
  type Category,
  type ModuleKind,
  type Session,
} from "./types";
import { assertSchemaCompiles } from "./validate";

export interface ResolvedCapability {
  /** Wire name `module.export`. */
  name: string;
  module: string;
  exportName: string;
  /** The spec with `category` replaced by the effective category. */
  spec: CapabilitySpec;
  declaredCategory: Category;
  impl: CapabilityImpl;
  versionHash: string;
  source: ModuleKind;
}

export interface RegisteredModule {
  name: string;
  description: string;
  source: ModuleKind;
  versionHash: string;
  doc?: string;
  exports: ResolvedCapability[];
}

export interface RegistryProblem {
  source: string;
  module: string;
  message: string;
}

export interface CapabilityRegistry {
  /** All usable modules, builtins first. */
  modules(): Promise<RegisteredModule[]>;
  /** Modules the session may import (`mountedModules`, where `*` means all). */
  mountedModules(session: Session): Promise<RegisteredModule[]>;
  /** A capability by wire name, or undefined. Does not check mounting. */
  resolve(name: string): Promise<ResolvedCapability | undefined>;
  /** Throws CAPABILITY_UNKNOWN (with a did-you-mean hint) unless `name` exists and is mounted for the session. */
  resolveMounted(session: Session, name: string): Promise<ResolvedCapability>;
  addSource(source: ModuleSource): void;
  /** Drop the cache (after a publish or a category change on this instance). */
  invalidate(): void;
  /** Modules left out at the last load and why (bad category, duplicate name, source failure). */
  problems(): RegistryProblem[];
}

export interface RegistryOptions {
  builtins: CapabilityModule[];
  sources?: ModuleSource[];
  categories?: CategoryLookup;
  /** How long source and category results are reused. Default 1000 ms. */
  cacheMs?: number;
  now?: () => number;
}

const MODULE_NAME = /^[a-z][a-z0-9_-]*$/;
const EXPORT_NAME = /^[A-Za-z_$][\w$]*$/;

export function isCategory(value: unknown): value is Category {
  return typeof value === "string" && (CATEGORIES as readonly string[]).includes(value);
}

/**
 * Checks a module before it is registered. Throws AppError CATEGORY_REQUIRED when an export has
 * no valid category, BAD_INPUT for malformed names or schemas.
 */
export function validateCapabilityModule(module: CapabilityModule): void {
  if (!MODULE_NAME.test(module.name)) {
    throw new AppError("BAD_INPUT", `module name "${module.name}" must match ${MODULE_NAME}`);
  }
  const seen = new Set<string>();
  for (const { spec, impl } of module.exports) {
    const prefix = `${module.name}.`;
    const exportName = spec.name.startsWith(prefix) ? spec.name.slice(prefix.length) : "";
    if (!EXPORT_NAME.test(exportName)) {
      throw new AppError(
        "BAD_INPUT",
        `capability "${spec.name}" must be named "${module.name}.<identifier>"`,
      );
    }
    if (seen.has(spec.name)) throw new AppError("BAD_INPUT", `capability "${spec.name}" is registered twice`);
    seen.add(spec.name);
    if (!isCategory(spec.category)) {
      throw new AppError(
        "CATEGORY_REQUIRED",
        `capability "${spec.name}" has no valid category (one of ${CATEGORIES.join(", ")}); there is no default`,
        { details: { capability: spec.name, category: spec.category ?? null } },
      );
    }
    if (typeof impl !== "function") throw new AppError("BAD_INPUT", `capability "${spec.name}" has no impl`);
    assertSchemaCompiles(spec);
  }
}

function isMounted(session: Session, module: string): boolean {
  return session.mountedModules.includes("*") || session.mountedModules.includes(module);
}

export function createCapabilityRegistry(options: RegistryOptions): CapabilityRegistry {
  for (const module of options.builtins) validateCapabilityModule(module);
  const sources = [...(options.sources ?? [])];
  const cacheMs = options.cacheMs ?? 1000;
  const now = options.now ?? Date.now;
  let cache: { at: number; modules: Promise<Loaded> } | undefined;
  let lastProblems: RegistryProblem[] = [];

  interface Loaded {
    modules: RegisteredModule[];
    byName: Map<string, ResolvedCapability>;
  }

  function toRegistered(module: CapabilityModule, categories: ReadonlyMap<string, string>): RegisteredModule {
    const exports = module.exports.map(({ spec, impl, versionHash }) => {
      const stored = categories.get(spec.name);
      if (stored !== undefined && !isCategory(stored)) {
        throw new AppError(
          "CATEGORY_REQUIRED",
          `capability "${spec.name}" has an unknown stored category "${stored}"`,
        );
      }
      const category = stored ?? spec.category;
      return {
        name: spec.name,
        module: module.name,
        exportName: spec.name.slice(module.name.length + 1),
        spec: { ...spec, category },
        declaredCategory: spec.category,
        impl,
        versionHash: versionHash ?? module.versionHash,
        source: module.source,
      } satisfies ResolvedCapability;
    });
    const out: RegisteredModule = {
      name: module.name,
      description: module.description,
      source: module.source,
      versionHash: module.versionHash,
      exports,
    };
    if (module.doc !== undefined) out.doc = module.doc;
    return out;
  }

  async function load(): Promise<Loaded> {
    const problems: RegistryProblem[] = [];
    const categories = options.categories ? await options.categories() : new Map<string, string>();
    const modules: RegisteredModule[] = [];
    const taken = new Set<string>();
    const add = (sourceId: string, module: CapabilityModule) => {
      try {
        if (taken.has(module.name))
          throw new AppError("BAD_INPUT", `module name "${module.name}" is already taken`);
        if (sourceId !== "builtin") validateCapabilityModule(module);
        modules.push(toRegistered(module, categories));
        taken.add(module.name);
      } catch (error) {
        problems.push({ source: sourceId, module: module.name, message: (error as Error).message });
      }
    };
    for (const module of options.builtins) add("builtin", module);
    const lists = await Promise.allSettled(sources.map((s) => s.listModules()));
    lists.forEach((result, i) => {
      const source = sources[i];
      if (!source) return;
      if (result.status === "rejected") {
        problems.push({ source: source.id, module: "*", message: `source failed: ${String(result.reason)}` });
        return;
      }
      for (const module of result.value) add(source.id, module);
    });
    const byName = new Map<string, ResolvedCapability>();
    for (const module of modules) for (const cap of module.exports) byName.set(cap.name, cap);
    lastProblems = problems;
    return { modules, byName };
  }

  function loaded(): Promise<Loaded> {
    const t = now();
    if (!cache || t - cache.at > cacheMs) {
      const modules = load();
      cache = { at: t, modules };
      modules.catch(() => {
        if (cache?.modules === modules) cache = undefined;
      });
    }
    return cache.modules;
  }

  return {
    async modules() {
      return (await loaded()).modules;
    },
    async mountedModules(session) {
      return (await loaded()).modules.filter((m) => isMounted(session, m.name));
    },
    async resolve(name) {
      return (await loaded()).byName.get(name);
    },
    async resolveMounted(session, name) {
      const { byName, modules } = await loaded();
      const cap = byName.get(name);
      if (cap && isMounted(session, cap.module)) return cap;
      const mounted = modules
        .filter((m) => isMounted(session, m.name))
        .flatMap((m) => m.exports.map((e) => e.name));
      throw new AppError("CAPABILITY_UNKNOWN", `unknown capability "${name}"${didYouMean(name, mounted)}`, {
        details: { capability: name },
      });
    },
    addSource(source) {
      sources.push(source);
      cache = undefined;
    },
    invalidate() {
      cache = undefined;
    },
    problems() {
      return lastProblems;
    },
  };
}
