import { z } from "zod";
import { loadEnv } from "../../env";
import {
  diffStoredVersions,
  listToolsets,
  setToolsetEnvVar,
  unsetToolsetEnvVar,
  updateToolsetSettings,
} from "../../modules/toolsets";
import {
  publishFromFolder,
  syncFromFolder,
  toolsetForConsole,
  tryBinding,
  tryItSchema,
  uploadSchema,
  uploadToolset,
} from "../../modules/toolsets/console";
import { adminProcedure, approverProcedure, router, viewerProcedure } from "../trpc";

const name = z.object({ name: z.string().min(1).max(64) });

export const toolsetsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listToolsets(ctx.db)),
  get: viewerProcedure
    .input(name)
    .query(({ ctx, input }) => toolsetForConsole(ctx.db, input.name, loadEnv().TOOLSTORE_TOOLSETS_DIR)),
  diff: viewerProcedure
    .input(name.extend({ from: z.number().int().min(1), to: z.number().int().min(1).optional() }))
    .query(({ ctx, input }) => diffStoredVersions(ctx.db, input.name, input.from, input.to)),

  /** Publishes every folder under TOOLSTORE_TOOLSETS_DIR. */
  sync: adminProcedure.mutation(async ({ ctx }) =>
    syncFromFolder(ctx.db, (await ctx.engine()).registry, loadEnv().TOOLSTORE_TOOLSETS_DIR, ctx.user.id),
  ),
  publishFolder: adminProcedure
    .input(name)
    .mutation(async ({ ctx, input }) =>
      publishFromFolder(
        ctx.db,
        (await ctx.engine()).registry,
        loadEnv().TOOLSTORE_TOOLSETS_DIR,
        ctx.user.id,
        input.name,
      ),
    ),
  upload: adminProcedure
    .input(uploadSchema)
    .mutation(async ({ ctx, input }) =>
      uploadToolset(ctx.db, (await ctx.engine()).registry, ctx.user.id, input),
    ),

  /** Sets a variable; a secret's value is stored and never returned. */
  setEnv: adminProcedure
    .input(
      z.object({
        toolset: z.string().min(1).max(64),
        name: z.string().min(1).max(128),
        value: z.string().max(8192),
        secret: z.boolean().optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => setToolsetEnvVar(ctx.db, input, (await ctx.engine()).registry)),
  unsetEnv: adminProcedure
    .input(z.object({ toolset: z.string().min(1).max(64), name: z.string().min(1).max(128) }))
    .mutation(async ({ ctx, input }) => unsetToolsetEnvVar(ctx.db, input, (await ctx.engine()).registry)),
  updateSettings: adminProcedure
    .input(
      name.extend({
        timeoutMs: z.number().int().optional(),
        allowedHosts: z.array(z.string().max(253)).max(100).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const { name: toolset, ...changes } = input;
      return updateToolsetSettings(ctx.db, toolset, changes, (await ctx.engine()).registry);
    }),

  /** Calls one binding through the gate (it may wait for approval); refusals come back as values. */
  tryIt: approverProcedure
    .input(tryItSchema)
    .mutation(async ({ ctx, input, signal }) => tryBinding(await ctx.engine(), ctx.user, input, signal)),
});
