/**
 * The admin's side of a declared category change: a republish that declares a new category sets
 * `Capability.pendingCategory`; accepting makes it the effective category and records a
 * CategoryChange (who, when, from, to, why); rejecting keeps the current category.
 * State changes are compare-and-set, so two admins cannot both apply one change.
 */
import type { Category } from "../../core/capabilities/types";
import { AppError } from "../../core/errors";
import type { Db } from "../../db";
import { asCategory } from "./rows";

export interface PendingCategoryChange {
  capability: string;
  module: string;
  current: Category;
  pending: Category;
  versionHash: string;
}

export async function listPendingCategoryChanges(db: Db): Promise<PendingCategoryChange[]> {
  const rows = await db.capability.findMany({
    where: { pendingCategory: { not: null }, active: true },
    orderBy: { name: "asc" },
    select: { name: true, module: true, category: true, pendingCategory: true, versionHash: true },
  });
  return rows.map((r) => ({
    capability: r.name,
    module: r.module,
    current: asCategory(r.category),
    pending: asCategory(r.pendingCategory as string),
    versionHash: r.versionHash,
  }));
}

async function pendingOf(db: Db, capability: string) {
  const row = await db.capability.findUnique({
    where: { name: capability },
    select: { id: true, category: true, pendingCategory: true },
  });
  if (!row) throw new AppError("NOT_FOUND", `no capability named "${capability}"`);
  if (row.pendingCategory === null)
    throw new AppError("CONFLICT", `${capability} has no pending category change`);
  return row as { id: string; category: string; pendingCategory: string };
}

export async function acceptCategoryChange(
  db: Db,
  input: { capability: string; userId: string | null; reason?: string },
): Promise<{ capability: string; from: Category; to: Category }> {
  const row = await pendingOf(db, input.capability);
  const { count } = await db.capability.updateMany({
    where: { id: row.id, category: row.category, pendingCategory: row.pendingCategory },
    data: { category: row.pendingCategory, pendingCategory: null },
  });
  if (count === 0)
    throw new AppError("CONFLICT", `the pending change of ${input.capability} was already decided`);
  await db.categoryChange.create({
    data: {
      capabilityId: row.id,
      fromCategory: row.category,
      toCategory: row.pendingCategory,
      reason: input.reason?.trim() || "accepted the category declared by the published code",
      changedById: input.userId,
    },
    select: { id: true },
  });
  return {
    capability: input.capability,
    from: asCategory(row.category),
    to: asCategory(row.pendingCategory),
  };
}

export async function rejectCategoryChange(db: Db, input: { capability: string }): Promise<void> {
  const row = await pendingOf(db, input.capability);
  const { count } = await db.capability.updateMany({
    where: { id: row.id, pendingCategory: row.pendingCategory },
    data: { pendingCategory: null },
  });
  if (count === 0)
    throw new AppError("CONFLICT", `the pending change of ${input.capability} was already decided`);
}

export interface CategoryHistoryEntry {
  from: Category | null;
  to: Category;
  reason: string;
  changedBy: string | null;
  at: Date;
}

export async function categoryHistory(db: Db, capability: string): Promise<CategoryHistoryEntry[]> {
  const row = await db.capability.findUnique({
    where: { name: capability },
    select: {
      changes: {
        orderBy: { createdAt: "desc" },
        select: {
          fromCategory: true,
          toCategory: true,
          reason: true,
          createdAt: true,
          changedBy: { select: { username: true } },
        },
      },
    },
  });
  if (!row) throw new AppError("NOT_FOUND", `no capability named "${capability}"`);
  return row.changes.map((c) => ({
    from: c.fromCategory === null ? null : asCategory(c.fromCategory),
    to: asCategory(c.toCategory),
    reason: c.reason,
    changedBy: c.changedBy?.username ?? null,
    at: c.createdAt,
  }));
}
