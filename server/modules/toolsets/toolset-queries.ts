/**
 * Read side of toolsets for the console and the CLI: the list, one toolset with its bindings,
 * settings, environment (secrets masked), capabilities and versions, and diffs between versions.
 * Rows are selected field by field; secret values never leave this module.
 */
import type { Category } from "../../core/capabilities/types";
import { AppError } from "../../core/errors";
import {
  diffToolsetVersions,
  formatToolsetDiff,
  type ToolsetBinding,
  type ToolsetDeclarations,
  type ToolsetDiff,
  type ToolsetLanguage,
} from "../../core/toolsets";
import type { Db } from "../../db";
import { asCategory, declarationsOf, parseBindings, parseHosts, storedLanguage, versionView } from "./rows";

export const SECRET_MASK = "••••••••";

export interface ToolsetSummary {
  name: string;
  description: string;
  version: number | null;
  contentHash: string | null;
  bindingCount: number;
  /** The current version's code file: toolset.ts (typescript) or toolset.py (python). */
  language: ToolsetLanguage;
  categories: Category[];
  timeoutMs: number;
  allowedHosts: string[];
  /** Declared variables (`@env`, `@secret`) that have no value yet. */
  missingEnv: string[];
  pendingCategoryChanges: number;
  updatedAt: Date;
}

export interface EnvVarView {
  name: string;
  secret: boolean;
  /** The value for plain variables; null for secrets (never returned). */
  value: string | null;
  /** What to display: the value, or a mask for a secret that is set. */
  display: string;
  set: boolean;
  declared: boolean;
  description: string;
  updatedAt: Date | null;
}

export interface CapabilityView {
  name: string;
  exportName: string;
  category: Category;
  declaredCategory: Category;
  pendingCategory: Category | null;
  versionHash: string;
  active: boolean;
}

export interface VersionSummary {
  version: number;
  contentHash: string;
  origin: string;
  publishedById: string | null;
  createdAt: Date;
  bindingCount: number;
  /** This version's code file: toolset.ts (typescript) or toolset.py (python). */
  language: ToolsetLanguage;
}

export interface ToolsetDetail {
  name: string;
  description: string;
  timeoutMs: number;
  allowedHosts: string[];
  version: number | null;
  contentHash: string | null;
  /** The current version's language (typescript when nothing is published). */
  language: ToolsetLanguage;
  doc: string;
  source: string;
  bindings: ToolsetBinding[];
  declarations: ToolsetDeclarations;
  env: EnvVarView[];
  capabilities: CapabilityView[];
  versions: VersionSummary[];
}

const VERSION_FIELDS = {
  id: true,
  version: true,
  contentHash: true,
  origin: true,
  publishedById: true,
  createdAt: true,
  bindings: true,
  language: true,
} as const;

function notFound(name: string): AppError {
  return new AppError("NOT_FOUND", `no toolset named "${name}"`);
}

/** The toolset's own columns, as the list and the detail read them. */
const TOOLSET_FIELDS = {
  id: true,
  name: true,
  description: true,
  timeoutMs: true,
  allowedHosts: true,
  currentVersionId: true,
} as const;

export async function listToolsets(db: Db): Promise<ToolsetSummary[]> {
  const toolsets = await db.toolset.findMany({
    orderBy: { name: "asc" },
    select: {
      ...TOOLSET_FIELDS,
      updatedAt: true,
      envVars: { select: { name: true } },
    },
  });
  const versionIds = toolsets.flatMap((t) => (t.currentVersionId ? [t.currentVersionId] : []));
  const versions = await db.toolsetVersion.findMany({
    where: { id: { in: versionIds } },
    select: { id: true, version: true, contentHash: true, bindings: true, source: true, language: true },
  });
  const byId = new Map(versions.map((v) => [v.id, v]));
  const pending = await db.capability.groupBy({
    by: ["module"],
    where: { source: "toolset", pendingCategory: { not: null }, active: true },
    _count: { _all: true },
  });
  const pendingBy = new Map(pending.map((p) => [p.module, p._count._all]));
  return toolsets.map((t) => {
    const v = t.currentVersionId ? byId.get(t.currentVersionId) : undefined;
    const bindings = v ? parseBindings(v.bindings) : [];
    const set = new Set(t.envVars.map((e) => e.name));
    const language = storedLanguage(v?.language ?? "typescript");
    return {
      name: t.name,
      description: t.description,
      version: v?.version ?? null,
      contentHash: v?.contentHash ?? null,
      bindingCount: bindings.length,
      language,
      categories: [...new Set(bindings.map((b) => b.category))],
      timeoutMs: t.timeoutMs,
      allowedHosts: parseHosts(t.allowedHosts),
      missingEnv: v
        ? declarationsOf(v.source, language)
            .env.filter((e) => !set.has(e.name))
            .map((e) => e.name)
        : [],
      pendingCategoryChanges: pendingBy.get(t.name) ?? 0,
      updatedAt: t.updatedAt,
    };
  });
}

export async function getToolset(db: Db, name: string): Promise<ToolsetDetail> {
  const toolset = await db.toolset.findUnique({
    where: { name },
    select: {
      ...TOOLSET_FIELDS,
      envVars: {
        select: { name: true, value: true, secret: true, updatedAt: true },
        orderBy: { name: "asc" },
      },
      versions: { select: VERSION_FIELDS, orderBy: { version: "desc" } },
    },
  });
  if (!toolset) throw notFound(name);
  const current = toolset.currentVersionId
    ? await db.toolsetVersion.findUnique({
        where: { id: toolset.currentVersionId },
        select: { version: true, contentHash: true, doc: true, source: true, language: true },
      })
    : null;
  const language = storedLanguage(current?.language ?? "typescript");
  const declarations = current
    ? declarationsOf(current.source, language)
    : { hosts: [], env: [], description: "" };
  const currentBindings = toolset.versions.find((v) => v.id === toolset.currentVersionId)?.bindings;
  const capabilities = await db.capability.findMany({
    where: { module: name, source: "toolset" },
    orderBy: { name: "asc" },
    select: {
      name: true,
      exportName: true,
      category: true,
      declaredCategory: true,
      pendingCategory: true,
      versionHash: true,
      active: true,
    },
  });
  return {
    name: toolset.name,
    description: toolset.description,
    timeoutMs: toolset.timeoutMs,
    allowedHosts: parseHosts(toolset.allowedHosts),
    version: current?.version ?? null,
    contentHash: current?.contentHash ?? null,
    language,
    doc: current?.doc ?? "",
    source: current?.source ?? "",
    bindings: currentBindings ? parseBindings(currentBindings) : [],
    declarations,
    env: envViews(declarations, toolset.envVars),
    capabilities: capabilities.map((c) => ({
      ...c,
      category: asCategory(c.category),
      declaredCategory: asCategory(c.declaredCategory),
      pendingCategory: c.pendingCategory === null ? null : asCategory(c.pendingCategory),
    })),
    versions: toolset.versions.map(versionSummary),
  };
}

function versionSummary(v: {
  version: number;
  contentHash: string;
  origin: string;
  publishedById: string | null;
  createdAt: Date;
  bindings: string;
  language: string;
}): VersionSummary {
  return {
    version: v.version,
    contentHash: v.contentHash,
    origin: v.origin,
    publishedById: v.publishedById,
    createdAt: v.createdAt,
    bindingCount: parseBindings(v.bindings).length,
    language: storedLanguage(v.language),
  };
}

/** Declared variables first (set or not), then variables set in the console but not declared. */
export function envViews(
  declarations: ToolsetDeclarations,
  rows: { name: string; value: string; secret: boolean; updatedAt: Date }[],
): EnvVarView[] {
  const byName = new Map(rows.map((r) => [r.name, r]));
  const view = (name: string, declaredSecret: boolean | undefined, description: string): EnvVarView => {
    const row = byName.get(name);
    const secret = row?.secret ?? declaredSecret ?? false;
    return {
      name,
      secret,
      value: row && !secret ? row.value : null,
      display: row ? (secret ? SECRET_MASK : row.value) : "",
      set: row !== undefined,
      declared: declaredSecret !== undefined,
      description,
      updatedAt: row?.updatedAt ?? null,
    };
  };
  const declared = declarations.env.map((d) => view(d.name, d.secret, d.description));
  const extra = rows
    .filter((r) => !declarations.env.some((d) => d.name === r.name))
    .map((r) => view(r.name, undefined, ""));
  return [...declared, ...extra];
}

export async function listToolsetVersions(db: Db, name: string): Promise<VersionSummary[]> {
  const toolset = await db.toolset.findUnique({
    where: { name },
    select: { versions: { select: VERSION_FIELDS, orderBy: { version: "desc" } } },
  });
  if (!toolset) throw notFound(name);
  return toolset.versions.map(versionSummary);
}

export interface ToolsetVersionDetail extends VersionSummary {
  doc: string;
  source: string;
  compiledJs: string;
  bindings: ToolsetBinding[];
}

export async function getToolsetVersion(
  db: Db,
  name: string,
  version: number,
): Promise<ToolsetVersionDetail> {
  const row = await db.toolsetVersion.findFirst({
    where: { version, toolset: { name } },
    select: { ...VERSION_FIELDS, doc: true, source: true, compiledJs: true },
  });
  if (!row) throw new AppError("NOT_FOUND", `toolset "${name}" has no version ${version}`);
  return {
    ...versionSummary(row),
    doc: row.doc,
    source: row.source,
    compiledJs: row.compiledJs,
    bindings: parseBindings(row.bindings),
  };
}

/** Diff between two stored versions; `to` defaults to the current one. */
export async function diffStoredVersions(
  db: Db,
  name: string,
  from: number,
  to?: number,
): Promise<{ from: number; to: number; diff: ToolsetDiff; lines: string[] }> {
  const target = to ?? (await getToolset(db, name)).version;
  if (target === null) throw notFound(name);
  const rows = await db.toolsetVersion.findMany({
    where: { toolset: { name }, version: { in: [from, target] } },
    select: { version: true, contentHash: true, doc: true, source: true, bindings: true, language: true },
  });
  const a = rows.find((r) => r.version === from);
  const b = rows.find((r) => r.version === target);
  if (!a || !b) throw new AppError("NOT_FOUND", `toolset "${name}" has no version ${!a ? from : target}`);
  const diff = diffToolsetVersions(versionView(a), versionView(b));
  return { from, to: target, diff, lines: formatToolsetDiff(diff) };
}
