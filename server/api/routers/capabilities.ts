import { z } from "zod";
import {
  capabilitySchema,
  categoryChangeSchema,
  categoryHistory,
  changeCategory,
  listCapabilities,
  listModuleNames,
} from "../../services/capability-categories";
import { adminProcedure, router, viewerProcedure } from "../trpc";

export const capabilitiesRouter = router({
  list: viewerProcedure.query(({ ctx }) => listCapabilities(ctx.db)),
  modules: viewerProcedure.query(({ ctx }) => listModuleNames(ctx.db)),
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
    .mutation(({ ctx, input }) => changeCategory(ctx.db, ctx.user.id, input)),
});
