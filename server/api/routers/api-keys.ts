import { z } from "zod";
import { apiKeyInputSchema, createApiKey, listApiKeys, revokeApiKey } from "../../services/api-keys";
import { listGrants, revokeGrantById } from "../../services/oauth/grants";
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
  /** OAuth grants (clients signed in by a user): each acts as an API key of that user. */
  grants: adminProcedure.query(({ ctx }) => listGrants(ctx.db)),
  revokeGrant: adminProcedure
    .input(z.object({ id: z.string().min(1) }))
    .mutation(({ ctx, input }) => revokeGrantById(ctx.db, input.id)),
});
