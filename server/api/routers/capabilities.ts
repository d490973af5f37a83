import { z } from "zod";
import type { Db } from "../../db";
import {
  capabilitySchema,
  categoryChangeSchema,
  categoryHistory,
  changeCategory,
  decidePendingCategory,
  listCapabilities,
  listModuleNames,
  pendingDecisionSchema,
} from "../../services/capability-categories";
import { getEngine } from "../../services/engine";
import { recordRegistryCapabilities } from "../../services/registry-capabilities";
import { adminProcedure, router, viewerProcedure } from "../trpc";

/** Built-in modules live in the registry; make sure they have rows before listing them. */
export async function withRegistryRows(db: Db): Promise<void> {
  await recordRegistryCapabilities(db, await (await getEngine()).registry.modules());
}

export const capabilitiesRouter = router({
  list: viewerProcedure.query(async ({ ctx }) => {
    await withRegistryRows(ctx.db);
    return listCapabilities(ctx.db);
  }),
  modules: viewerProcedure.query(async ({ ctx }) => {
    await withRegistryRows(ctx.db);
    return listModuleNames(ctx.db);
  }),
  schema: viewerProcedure
    .input(z.object({ name: z.string().min(1).max(200) }))
    .query(({ ctx, input }) => capabilitySchema(ctx.db, input.name)),
  history: viewerProcedure
    .input(
      z.object({
        capability: z.string().max(200).optional(),
        take: z.number().int().min(1).max(500).optional(),
      }),
    )
    .query(({ ctx, input }) => categoryHistory(ctx.db, input)),
  changeCategory: adminProcedure.input(categoryChangeSchema).mutation(async ({ ctx, input }) => {
    const change = await changeCategory(ctx.db, ctx.user.id, input);
    // This instance's registry sees the new category at once; others within their short cache.
    (await getEngine()).registry.invalidate();
    return change;
  }),
  /** Accept or decline the category a republished version declares. */
  decidePending: adminProcedure.input(pendingDecisionSchema).mutation(async ({ ctx, input }) => {
    const change = await decidePendingCategory(ctx.db, ctx.user.id, input);
    (await getEngine()).registry.invalidate();
    return change;
  }),
});
