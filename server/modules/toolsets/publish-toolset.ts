/**
 * Publishing a toolset version: validate and compile (core), store a new ToolsetVersion, point the
 * Toolset at it, and bring the Capability rows in line. Used by the CLI (`publish-toolset`,
 * `sync-toolsets`), startup sync and the console (upload).
 *
 * Categories: a new capability takes its declared category; when a republish declares a different
 * category for an existing capability, the effective category stays and `pendingCategory` waits for
 * an admin (decided in ../capability-categories.ts). Every capability carries the version hash, so grants and allow
 * rules given to an earlier hash stop applying.
 */
import { randomUUID } from "node:crypto";
import type { Category } from "../../core/capabilities/types";
import { AppError } from "../../core/errors";
import type { PythonParser } from "../../core/python/parse-python";
import {
  type CompiledToolset,
  capabilityName,
  compileToolsetFiles,
  computeContentHash,
  diffToolsetVersions,
  formatToolsetDiff,
  readToolsetFolder,
  type ToolsetDiagnostic,
  type ToolsetDiff,
  type ToolsetFiles,
} from "../../core/toolsets";
import type { Db, Prisma } from "../../db";
import { parsePythonToolset } from "../../services/python-runtime";
import { parseHosts, versionView } from "./rows";

export type PublishOrigin = "cli" | "sync" | "upload" | "console";

export interface PublishInput {
  /** A toolset folder; its name is the toolset name unless `name` is given. */
  dir?: string;
  /** The two files of an upload (then `name` is required). */
  files?: ToolsetFiles;
  name?: string;
  origin: PublishOrigin;
  /** Console user who published; null/undefined for the CLI and startup sync. */
  userId?: string | null;
  /** Reads toolset.py (default: the process's Python runtime). */
  parsePython?: PythonParser;
}

export interface PendingCategory {
  capability: string;
  /** The effective category, which stays until an admin accepts. */
  current: Category;
  declared: Category;
}

export interface PublishResult {
  status: "created" | "updated" | "unchanged";
  name: string;
  version: number;
  contentHash: string;
  previousHash?: string;
  diff?: ToolsetDiff;
  /** Human-readable change lines (`+`, `-`, `~`). */
  changes: string[];
  warnings: ToolsetDiagnostic[];
  pendingCategories: PendingCategory[];
  /** One paragraph for a terminal or a toast. */
  message: string;
}

function shortHash(hash: string): string {
  return hash.slice(0, 12);
}

function compileInput(input: PublishInput): Promise<CompiledToolset> {
  const options = { parsePython: input.parsePython ?? parsePythonToolset };
  if (input.dir) {
    const folder = readToolsetFolder(input.dir);
    return compileToolsetFiles(
      {
        ...folder,
        name: input.name ?? folder.name,
        files: folder.files as ToolsetFiles,
      },
      options,
    );
  }
  if (!input.files || !input.name) {
    throw new AppError(
      "BAD_INPUT",
      "publish needs a folder, or the two files (doc.md, toolset.ts or toolset.py) and a name",
    );
  }
  return compileToolsetFiles({ name: input.name, files: input.files }, options);
}

/** New declared hosts are added and hosts no longer declared are removed; console additions stay. */
export function applyDeclaredHosts(
  current: string[],
  declaredBefore: string[] | undefined,
  declaredNow: string[],
): string[] {
  const before = declaredBefore ?? [];
  const dropped = before.filter((h) => !declaredNow.includes(h));
  const added = declaredNow.filter((h) => !before.includes(h));
  const kept = current.filter((h) => !dropped.includes(h));
  return [...kept, ...added.filter((h) => !kept.includes(h))];
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
}

/**
 * The current version when the files are byte-for-byte what it was built from (by content hash),
 * so an unchanged folder skips the parse and type check entirely (sync at every start).
 */
async function unchangedVersion(db: Db, input: PublishInput): Promise<PublishResult | null> {
  const folder = input.dir ? readToolsetFolder(input.dir) : undefined;
  const name = input.name ?? folder?.name;
  const files = folder?.files ?? input.files;
  if (!name || files?.doc === undefined || files.source === undefined) return null;
  const hash = computeContentHash({
    doc: files.doc,
    source: files.source,
    ...(files.language ? { language: files.language } : {}),
  });
  const row = await db.toolset.findUnique({ where: { name }, select: { currentVersionId: true } });
  const current = row?.currentVersionId
    ? await db.toolsetVersion.findUnique({
        where: { id: row.currentVersionId },
        select: { version: true, contentHash: true },
      })
    : null;
  if (!current || current.contentHash !== hash) return null;
  return unchangedResult(name, current, []);
}

export async function publishToolset(db: Db, input: PublishInput): Promise<PublishResult> {
  const unchanged = await unchangedVersion(db, input);
  if (unchanged) return unchanged;
  const compiled = await compileInput(input);
  try {
    return await publishCompiled(db, compiled, input);
  } catch (error) {
    // Two publishers raced for the same version number or the same new toolset: one retry sees the winner.
    if (!isUniqueViolation(error)) throw error;
    try {
      return await publishCompiled(db, compiled, input);
    } catch (again) {
      if (isUniqueViolation(again)) {
        throw new AppError("CONFLICT", `toolset "${compiled.name}" was published concurrently; try again`);
      }
      throw again;
    }
  }
}

/** A publish of the content the toolset already has: nothing is written. */
function unchangedResult(
  name: string,
  current: { version: number; contentHash: string },
  warnings: PublishResult["warnings"],
): PublishResult {
  return {
    status: "unchanged",
    name,
    version: current.version,
    contentHash: current.contentHash,
    changes: [],
    warnings,
    pendingCategories: [],
    message: `${name} is already at v${current.version} (hash ${shortHash(current.contentHash)}); nothing published`,
  };
}

/** A module name belongs to one source: a toolset may not take a built-in's or an MCP server's. */
async function assertModuleNameFree(db: Db, name: string): Promise<void> {
  const foreign = await db.capability.findFirst({
    where: { module: name, source: { not: "toolset" } },
    select: { source: true },
  });
  if (foreign) {
    throw new AppError(
      "CONFLICT",
      `module name "${name}" is taken by a ${foreign.source} module; rename the toolset folder`,
    );
  }
}

async function readCurrent(db: Db, name: string) {
  const existing = await db.toolset.findUnique({
    where: { name },
    select: { id: true, timeoutMs: true, allowedHosts: true, currentVersionId: true },
  });
  const current = existing?.currentVersionId
    ? await db.toolsetVersion.findUnique({
        where: { id: existing.currentVersionId },
        select: { version: true, contentHash: true, doc: true, source: true, bindings: true, language: true },
      })
    : null;
  return { existing, current };
}

type Existing = Awaited<ReturnType<typeof readCurrent>>["existing"];
type Op = Prisma.PrismaPromise<unknown>;

interface NewVersion {
  compiled: CompiledToolset;
  input: PublishInput;
  toolsetId: string;
  versionId: string;
  version: number;
  declaredBefore: ReturnType<typeof versionView>["declarations"] | undefined;
}

/** The toolset row (created, or pointed at the new version with its declared hosts and timeout) and the version row. */
function toolsetOps(db: Db, existing: Existing, v: NewVersion): Op[] {
  const { compiled, toolsetId, versionId } = v;
  const declared = compiled.declarations;
  const ops: Op[] = [];
  if (existing) {
    const hosts = applyDeclaredHosts(
      parseHosts(existing.allowedHosts),
      v.declaredBefore?.hosts,
      declared.hosts,
    );
    const timeoutChanged =
      declared.timeoutMs !== undefined && declared.timeoutMs !== v.declaredBefore?.timeoutMs;
    ops.push(
      db.toolset.update({
        where: { id: toolsetId },
        data: {
          description: compiled.description,
          currentVersionId: versionId,
          allowedHosts: JSON.stringify(hosts),
          ...(timeoutChanged ? { timeoutMs: declared.timeoutMs } : {}),
        },
        select: { id: true },
      }),
    );
  } else {
    ops.push(
      db.toolset.create({
        data: {
          id: toolsetId,
          name: compiled.name,
          description: compiled.description,
          currentVersionId: versionId,
          allowedHosts: JSON.stringify(declared.hosts),
          ...(declared.timeoutMs === undefined ? {} : { timeoutMs: declared.timeoutMs }),
        },
        select: { id: true },
      }),
    );
  }
  ops.push(
    db.toolsetVersion.create({
      data: {
        id: versionId,
        toolsetId,
        version: v.version,
        source: compiled.source,
        doc: compiled.doc,
        compiledJs: compiled.compiledJs,
        contentHash: compiled.contentHash,
        bindings: JSON.stringify(compiled.bindings),
        language: compiled.language,
        origin: v.input.origin,
        publishedById: v.input.userId ?? null,
      },
      select: { id: true },
    }),
  );
  return ops;
}

/**
 * One Capability row per binding at the new version (a new one with its first category change),
 * the rows of bindings that are gone made inactive, and the category changes that now wait.
 */
async function capabilityOps(db: Db, v: NewVersion): Promise<{ ops: Op[]; pending: PendingCategory[] }> {
  const { compiled, version } = v;
  const { name } = compiled;
  const capabilities = await db.capability.findMany({
    where: { module: name },
    select: { id: true, name: true, category: true, declaredCategory: true, pendingCategory: true },
  });
  const byName = new Map(capabilities.map((c) => [c.name, c]));
  const ops: Op[] = [];
  const pending: PendingCategory[] = [];
  for (const binding of compiled.bindings) {
    const wire = capabilityName(name, binding.name);
    const row = byName.get(wire);
    const common = {
      description: binding.description,
      inputSchema: JSON.stringify(binding.inputSchema),
      versionHash: compiled.contentHash,
      declaredCategory: binding.category,
      active: true,
    };
    if (!row) {
      const capabilityId = randomUUID();
      const file = compiled.language === "python" ? "toolset.py" : "toolset.ts";
      ops.push(
        db.capability.create({
          data: {
            id: capabilityId,
            name: wire,
            module: name,
            exportName: binding.name,
            source: "toolset",
            category: binding.category,
            ...common,
          },
          select: { id: true },
        }),
        db.categoryChange.create({
          data: {
            capabilityId,
            fromCategory: null,
            toCategory: binding.category,
            reason: binding.categoryPending
              ? `first published in ${name} v${version}; a bare @tool declared no category, so it runs as ${binding.category} until an admin sets one`
              : `first published in ${name} v${version} (declared in ${file})`,
            changedById: v.input.userId ?? null,
          },
          select: { id: true },
        }),
      );
      continue;
    }
    // Only a change of the DECLARED category raises a pending change; an admin's own choice
    // (category differs from an unchanged declaration) is left alone.
    let pendingCategory = row.pendingCategory;
    if (binding.category === row.category) pendingCategory = null;
    else if (binding.category !== row.declaredCategory) pendingCategory = binding.category;
    if (pendingCategory !== null && pendingCategory === binding.category) {
      pending.push({ capability: wire, current: row.category as Category, declared: binding.category });
    }
    ops.push(
      db.capability.update({
        where: { id: row.id },
        data: { ...common, exportName: binding.name, pendingCategory },
        select: { id: true },
      }),
    );
  }
  const names = compiled.bindings.map((b) => capabilityName(name, b.name));
  ops.push(
    db.capability.updateMany({ where: { module: name, name: { notIn: names } }, data: { active: false } }),
  );
  return { ops, pending };
}

/** What a publish prints: the version, its changes, what waits for an admin, what to set. */
function publishMessage(
  compiled: CompiledToolset,
  version: number,
  current: { version: number; contentHash: string } | null,
  changes: string[],
  pending: PendingCategory[],
): string {
  const { name } = compiled;
  const lines = [
    current
      ? `published ${name} v${version} (hash ${shortHash(compiled.contentHash)}; was v${current.version} ${shortHash(current.contentHash)})`
      : `published ${name} v${version} (hash ${shortHash(compiled.contentHash)}), ${compiled.bindings.length} binding(s)`,
    ...changes.flatMap((l) => l.split("\n")).map((l) => `  ${l}`),
  ];
  if (current)
    lines.push("  grants and allow rules bound to the previous version no longer apply to the changed code");
  for (const p of pending) {
    lines.push(
      `  category change waits for an admin: ${p.capability} ${p.current} -> ${p.declared} (stays ${p.current} until accepted)`,
    );
  }
  const undeclared = compiled.bindings
    .filter((b) => b.categoryPending)
    .map((b) => capabilityName(name, b.name));
  if (undeclared.length > 0) {
    lines.push(
      `  no category declared (bare @tool): ${undeclared.join(", ")} run as execute until an admin sets a category in the console (Capabilities), or write @tool(category="read")`,
    );
  }
  const env = compiled.declarations.env;
  if (!current && env.length > 0) {
    lines.push(
      `  set its environment in the console: ${env.map((e) => e.name + (e.secret ? " (secret)" : "")).join(", ")}`,
    );
  }
  return lines.join("\n");
}

async function publishCompiled(
  db: Db,
  compiled: CompiledToolset,
  input: PublishInput,
): Promise<PublishResult> {
  const { name } = compiled;
  await assertModuleNameFree(db, name);
  const { existing, current } = await readCurrent(db, name);
  if (current && current.contentHash === compiled.contentHash) {
    return unchangedResult(name, current, compiled.warnings);
  }

  const previous = current ? versionView(current) : undefined;
  const diff = previous ? diffToolsetVersions(previous, compiled) : undefined;
  const toolsetId = existing?.id ?? randomUUID();
  const maxVersion = existing
    ? ((await db.toolsetVersion.aggregate({ where: { toolsetId }, _max: { version: true } }))._max.version ??
      0)
    : 0;
  const v: NewVersion = {
    compiled,
    input,
    toolsetId,
    versionId: randomUUID(),
    version: maxVersion + 1,
    declaredBefore: previous?.declarations,
  };
  const capabilities = await capabilityOps(db, v);
  await db.$transaction([...toolsetOps(db, existing, v), ...capabilities.ops]);

  const changes = diff
    ? formatToolsetDiff(diff)
    : compiled.bindings.map((b) => `+ ${b.name} [${b.category}]  ${b.signature}`);
  const result: PublishResult = {
    status: current ? "updated" : "created",
    name,
    version: v.version,
    contentHash: compiled.contentHash,
    changes,
    warnings: compiled.warnings,
    pendingCategories: capabilities.pending,
    message: publishMessage(compiled, v.version, current, changes, capabilities.pending),
  };
  if (current) result.previousHash = current.contentHash;
  if (diff) result.diff = diff;
  return result;
}
