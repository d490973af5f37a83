import { z } from "zod";
import { acceptReview, acceptReviewSchema, listPendingReviews } from "../../modules/category-review";
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
import { adminProcedure, router, viewerProcedure } from "../trpc";

export const capabilitiesRouter = router({
  list: viewerProcedure.query(({ ctx }) => listCapabilities(ctx.db, { started: ctx.engine })),
  modules: viewerProcedure.query(({ ctx }) => listModuleNames(ctx.db, { started: ctx.engine })),
  /** The library modules (toolstore/lib/<name>): no category, no approvals. */
  libraries: viewerProcedure.query(async ({ ctx }) =>
    (await ctx.engine()).libraries.list().map((l) => ({
      name: l.name,
      description: l.description,
      builtOn: l.builtOn,
      exports: l.exports.map((e) => ({ name: e.name, description: e.description, signature: e.signature })),
    })),
  ),
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
  changeCategory: adminProcedure
    .input(categoryChangeSchema)
    .mutation(async ({ ctx, input }) =>
      changeCategory(ctx.db, ctx.user.id, input, (await ctx.engine()).registry),
    ),
  /** Every capability of every source whose category waits for an admin. */
  reviews: viewerProcedure.query(async ({ ctx }) => listPendingReviews(ctx.db, (await ctx.engine()).plugins)),
  /** Sets a waiting capability's category at the version the admin saw (any source). */
  acceptReview: adminProcedure.input(acceptReviewSchema).mutation(async ({ ctx, input }) => {
    const engine = await ctx.engine();
    return acceptReview(ctx.db, engine.plugins, ctx.user.id, input, engine.registry);
  }),
  /** Accept or decline the category a republished version declares. */
  decidePending: adminProcedure
    .input(pendingDecisionSchema)
    .mutation(async ({ ctx, input }) =>
      decidePendingCategory(ctx.db, ctx.user.id, input, (await ctx.engine()).registry),
    ),
});
