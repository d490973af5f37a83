/**
 * Toolsets as a source plug-in: the toolsets in the database as modules whose bindings run in the
 * engine's binding runtimes, the shipped folder loaded at start, and a republished category
 * reviewed in the one category-review flow at the toolset version that declared it.
 */
import path from "node:path";
import type { ModuleSource } from "../../core/capabilities/ports";
import type { Category } from "../../core/capabilities/types";
import type { Db } from "../../db";
import { loadEnv } from "../../env";
import { settleCapabilityCategory } from "../../services/capability-categories";
import type { ReviewItem, SourcePlugin } from "../plugin";
import { loadToolsetsFolder } from "./sync-toolsets";
import { createToolsetModuleSource } from "./toolset-modules";

async function pendingCategories(db: Db): Promise<ReviewItem[]> {
  const rows = await db.capability.findMany({
    where: { source: "toolset", pendingCategory: { not: null }, active: true },
    orderBy: { name: "asc" },
    select: { name: true, category: true, pendingCategory: true, versionHash: true },
  });
  return rows.map((r) => ({
    capability: r.name,
    source: "toolsets",
    hash: r.versionHash,
    current: r.category as Category,
    proposed: r.pendingCategory as Category,
    reason: `the new version declares ${r.pendingCategory}; the gate uses ${r.category} until an admin decides`,
  }));
}

export const toolsetsPlugin: SourcePlugin<"toolsets", { moduleSources: ModuleSource[] }> = {
  id: "toolsets",
  kind: "toolset",
  create: ({ db, runtimes }) => ({ moduleSources: [createToolsetModuleSource({ db, runtimes })] }),
  review: {
    pending: pendingCategories,
    accept: (db, userId, input) =>
      settleCapabilityCategory(db, userId, input, { source: "toolset", pendingCategory: { not: null } }),
  },
  loadAtStart: (db, { root, log }) =>
    loadToolsetsFolder(db, path.resolve(root, loadEnv().TOOLSTORE_TOOLSETS_DIR), log),
};
