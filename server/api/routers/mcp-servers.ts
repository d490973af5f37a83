import { z } from "zod";
import { siteOfRequest } from "../../http/oauth";
import { getServer, listServers } from "../../modules/mcp-servers";
import {
  categorizeFromConsole,
  categorizeSchema,
  importServersFromConsole,
  refreshServerFromConsole,
  removeServerFromConsole,
  saveServerFromConsole,
  setSecretFromConsole,
} from "../../modules/mcp-servers/console";
import {
  serversNeedingReauth,
  startUpstreamAuthorization,
  upstreamOAuthState,
} from "../../modules/mcp-servers/upstream-oauth";
import { adminProcedure, router, viewerProcedure } from "../trpc";

const name = z.object({ name: z.string().min(1).max(64) });

export const mcpServersRouter = router({
  list: viewerProcedure.query(({ ctx }) => listServers(ctx.db)),
  /** The OAuth state of an HTTP server ToolStore is (or is becoming) the client of. */
  oauth: viewerProcedure.input(name).query(({ ctx, input }) => upstreamOAuthState(ctx.db, input.name)),
  /** Servers whose OAuth authorization must be renewed (the approvals inbox shows a card each). */
  needsReauth: viewerProcedure.query(({ ctx }) => serversNeedingReauth(ctx.db)),
  /** Starts an OAuth authorization; the console sends the browser to the returned URL. */
  authorize: adminProcedure.input(name).mutation(async ({ ctx, input }) => ({
    url: await startUpstreamAuthorization(ctx.db, input.name, {
      origin: siteOfRequest(ctx.req).issuer,
      username: ctx.user.username,
    }),
  })),
  get: viewerProcedure.input(name).query(({ ctx, input }) => getServer(ctx.db, input.name)),
  /** Adds (or with `replace`, edits) a server and reaches it; validation happens in the service. */
  save: adminProcedure
    .input(z.object({ server: z.record(z.string(), z.unknown()), replace: z.boolean().default(false) }))
    .mutation(async ({ ctx, input }) =>
      saveServerFromConsole(ctx.db, await ctx.engine(), input.server, input.replace),
    ),
  import: adminProcedure
    .input(z.object({ json: z.string().min(2).max(200_000), replace: z.boolean().default(false) }))
    .mutation(async ({ ctx, input }) =>
      importServersFromConsole(ctx.db, await ctx.engine(), input.json, input.replace),
    ),
  refresh: adminProcedure
    .input(name)
    .mutation(async ({ ctx, input }) => refreshServerFromConsole(ctx.db, await ctx.engine(), input.name)),
  /** Stores a secret; its value is never returned. */
  setSecret: adminProcedure
    .input(name.extend({ secret: z.string().min(1).max(128), value: z.string().min(1).max(8192) }))
    .mutation(async ({ ctx, input }) => setSecretFromConsole(ctx.db, await ctx.engine(), input)),
  categorize: adminProcedure
    .input(categorizeSchema)
    .mutation(async ({ ctx, input }) =>
      categorizeFromConsole(ctx.db, await ctx.engine(), ctx.user.id, input),
    ),
  remove: adminProcedure
    .input(name)
    .mutation(async ({ ctx, input }) => removeServerFromConsole(ctx.db, await ctx.engine(), input.name)),
});
