import { z } from "zod";
import { apiKeyInputSchema, createApiKey, listApiKeys, revokeApiKey } from "../../services/api-keys";
import { adminProcedure, router } from "../trpc";

export const apiKeysRouter = router({
  list: adminProcedure.query(({ ctx }) => listApiKeys(ctx.db)),
  /** Returns the key in clear exactly once. */
  create: adminProcedure
    .input(apiKeyInputSchema)
    .mutation(({ ctx, input }) => createApiKey(ctx.db, ctx.user.id, input)),
  revoke: adminProcedure
    .input(z.object({ id: z.string().min(1) }))
    .mutation(({ ctx, input }) => revokeApiKey(ctx.db, input.id)),
});
