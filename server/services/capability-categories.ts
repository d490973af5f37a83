/**
 * Capabilities as the console lists them (every module and export with its effective category)
 * and the admin's category change: an audited event with who, when, from, to and why. The gate
 * reads the stored category through the engine's category lookup; a change takes effect within
 * the registry's short cache (at once on the instance whose registry the writer passes).
 */
import { z } from "zod";
import type { CategoryLookup } from "../core/capabilities/ports";
import type { CapabilityRegistry } from "../core/capabilities/registry";
import { CATEGORIES, type Category } from "../core/capabilities/types";
import { AppError } from "../core/errors";
import type { Db, Prisma } from "../db";

/** Why an admin set a category: kept in the history beside who and when. */
export const categoryReasonSchema = z
  .string()
  .trim()
  .min(3, "say why (at least 3 characters); the reason is kept in the history")
  .max(500, "the reason has at most 500 characters");

export const categoryChangeSchema = z.object({
  capability: z.string().trim().min(1).max(200),
  category: z.enum(CATEGORIES),
  reason: categoryReasonSchema,
});
export type CategoryChangeInput = z.input<typeof categoryChangeSchema>;

export interface CapabilityRow {
  id: string;
  name: string;
  module: string;
  exportName: string;
  source: string;
  category: Category;
  declaredCategory: string;
  pendingCategory: string | null;
  description: string;
  active: boolean;
  updatedAt: Date;
}

/**
 * Built-in capabilities get their rows when the engine starts (server/engine); a list
 * for the console passes `started` so a fresh instance lists them too.
 */
export interface ListOptions {
  started?: () => Promise<unknown>;
}

export async function listCapabilities(db: Db, options: ListOptions & { includeInactive?: boolean } = {}) {
  await options.started?.();
  const rows = await db.capability.findMany({
    where: options.includeInactive ? {} : { active: true },
    orderBy: [{ module: "asc" }, { exportName: "asc" }],
    select: {
      id: true,
      name: true,
      module: true,
      exportName: true,
      source: true,
      category: true,
      declaredCategory: true,
      pendingCategory: true,
      description: true,
      active: true,
      updatedAt: true,
    },
  });
  return rows as CapabilityRow[];
}

/** The input schema of one capability (for sample arguments in "test a call"). */
export async function capabilitySchema(db: Db, name: string): Promise<unknown> {
  const row = await db.capability.findUnique({ where: { name }, select: { inputSchema: true } });
  if (!row) throw new AppError("NOT_FOUND", `unknown capability "${name}"`);
  try {
    return JSON.parse(row.inputSchema) as unknown;
  } catch {
    return {};
  }
}

/** Module names with at least one active capability, for mounting choices. */
export async function listModuleNames(
  db: Db,
  options: ListOptions = {},
): Promise<{ name: string; source: string; exports: number }[]> {
  await options.started?.();
  const groups = await db.capability.groupBy({
    by: ["module", "source"],
    where: { active: true },
    _count: { _all: true },
    orderBy: { module: "asc" },
  });
  return groups.map((g) => ({ name: g.module, source: g.source, exports: g._count._all }));
}

export interface CategoryChangeRow {
  id: string;
  capability: string;
  fromCategory: string | null;
  toCategory: string;
  reason: string;
  changedBy: string | null;
  createdAt: Date;
}

const CHANGE_SELECT = {
  id: true,
  fromCategory: true,
  toCategory: true,
  reason: true,
  createdAt: true,
  capability: { select: { name: true } },
  changedBy: { select: { username: true } },
} as const;

function toChangeRow(row: {
  id: string;
  fromCategory: string | null;
  toCategory: string;
  reason: string;
  createdAt: Date;
  capability: { name: string };
  changedBy: { username: string } | null;
}): CategoryChangeRow {
  return {
    id: row.id,
    capability: row.capability.name,
    fromCategory: row.fromCategory,
    toCategory: row.toCategory,
    reason: row.reason,
    changedBy: row.changedBy?.username ?? null,
    createdAt: row.createdAt,
  };
}

/** Category history, newest first: of one capability, or of all when `capability` is left out. */
export async function categoryHistory(
  db: Db,
  options: { capability?: string; take?: number } = {},
): Promise<CategoryChangeRow[]> {
  const rows = await db.categoryChange.findMany({
    where: options.capability ? { capability: { name: options.capability } } : {},
    orderBy: { createdAt: "desc" },
    take: Math.min(options.take ?? 50, 500),
    select: CHANGE_SELECT,
  });
  return rows.map(toChangeRow);
}

/**
 * Sets the effective category. Compare-and-set on the category read first, so two admins
 * changing the same capability at once cannot both record "from" the same value. Setting the
 * category a republish proposed also settles that pending change.
 */
export async function changeCategory(
  db: Db,
  userId: string,
  input: CategoryChangeInput,
  registry?: Pick<CapabilityRegistry, "invalidate">,
): Promise<CategoryChangeRow> {
  const parsed = categoryChangeSchema.safeParse(input);
  if (!parsed.success) {
    throw new AppError("BAD_INPUT", parsed.error.issues.map((i) => i.message).join("; "));
  }
  const { capability, category, reason } = parsed.data;
  const current = await db.capability.findUnique({
    where: { name: capability },
    select: { id: true, category: true, pendingCategory: true },
  });
  if (!current) throw new AppError("NOT_FOUND", `unknown capability "${capability}"`);
  if (current.category === category) {
    throw new AppError("BAD_INPUT", `${capability} is already ${category}`);
  }
  const { count } = await db.capability.updateMany({
    where: { id: current.id, category: current.category },
    data: {
      category,
      ...(current.pendingCategory === category ? { pendingCategory: null } : {}),
    },
  });
  if (count === 0) {
    throw new AppError("CONFLICT", `${capability} was changed by someone else just now; reload and retry`);
  }
  const row = await db.categoryChange.create({
    data: {
      capabilityId: current.id,
      fromCategory: current.category,
      toCategory: category,
      reason,
      changedById: userId,
    },
    select: CHANGE_SELECT,
  });
  registry?.invalidate();
  return toChangeRow(row);
}

export const pendingDecisionSchema = z.object({
  capability: z.string().trim().min(1).max(200),
  accept: z.boolean(),
  reason: z.string().trim().max(500).default(""),
});
export type PendingDecisionInput = z.input<typeof pendingDecisionSchema>;

/**
 * Settles the category a republish declared: accept it (the category changes, recorded like any
 * change) or keep the current one (recorded with from = to, so the history shows who chose it).
 */
export async function decidePendingCategory(
  db: Db,
  userId: string,
  input: PendingDecisionInput,
  registry?: Pick<CapabilityRegistry, "invalidate">,
): Promise<CategoryChangeRow> {
  const { capability, accept, reason } = pendingDecisionSchema.parse(input);
  const current = await db.capability.findUnique({
    where: { name: capability },
    select: { id: true, category: true, pendingCategory: true },
  });
  if (!current) throw new AppError("NOT_FOUND", `unknown capability "${capability}"`);
  const pending = current.pendingCategory;
  if (!pending) throw new AppError("CONFLICT", `${capability} has no pending category change`);
  if (accept) {
    return changeCategory(
      db,
      userId,
      {
        capability,
        category: pending as Category,
        reason: reason || `accepted the category ${pending} declared by the new version`,
      },
      registry,
    );
  }
  const { count } = await db.capability.updateMany({
    where: { id: current.id, pendingCategory: pending },
    data: { pendingCategory: null },
  });
  if (count === 0) throw new AppError("CONFLICT", `${capability} was settled by someone else just now`);
  const row = await db.categoryChange.create({
    data: {
      capabilityId: current.id,
      fromCategory: current.category,
      toCategory: current.category,
      reason: reason || `kept ${current.category}; the new version declares ${pending}`,
      changedById: userId,
    },
    select: CHANGE_SELECT,
  });
  registry?.invalidate();
  return toChangeRow(row);
}

/** The effective categories the registry applies to every source's capabilities. */
export function createCapabilityCategoryLookup(db: Db): CategoryLookup {
  return async () => {
    const rows = await db.capability.findMany({
      where: { active: true },
      select: { name: true, category: true },
    });
    return new Map(rows.map((r) => [r.name, r.category]));
  };
}

/**
 * Sets a capability's category at the version an admin reviewed and settles its pending proposal,
 * in one compare-and-set: refused with CONFLICT when the version or the category moved since.
 * `where` narrows it to the rows a source owns (e.g. a toolset's capabilities with a proposal).
 */
export async function settleCapabilityCategory(
  db: Db,
  userId: string | null,
  input: { capability: string; hash: string; category: Category; reason: string },
  where: Prisma.CapabilityWhereInput = {},
): Promise<void> {
  const current = await db.capability.findFirst({
    where: { ...where, name: input.capability, active: true },
    select: { id: true, category: true, versionHash: true },
  });
  if (!current) throw new AppError("NOT_FOUND", `${input.capability} has no category waiting for review`);
  if (current.versionHash !== input.hash) {
    throw new AppError(
      "CONFLICT",
      `${input.capability} has a new version since you looked (now ${current.versionHash.slice(0, 12)}); review it again`,
    );
  }
  const { count } = await db.capability.updateMany({
    where: { id: current.id, category: current.category, versionHash: input.hash },
    data: { category: input.category, pendingCategory: null },
  });
  if (count === 0) {
    throw new AppError(
      "CONFLICT",
      `${input.capability} was changed by someone else just now; reload and retry`,
    );
  }
  await db.categoryChange.create({
    data: {
      capabilityId: current.id,
      fromCategory: current.category,
      toCategory: input.category,
      reason: input.reason,
      changedById: userId,
    },
    select: { id: true },
  });
}
