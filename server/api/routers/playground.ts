import { z } from "zod";
import { getConsoleClients } from "../../services/console-clients";
import {
  cancelPlaygroundRun,
  getPlaygroundState,
  playgroundAnswerSchema,
  playgroundModules,
  playgroundPlanSchema,
  playgroundRunSchema,
  playgroundStateSchema,
  savePlaygroundState,
  startPlaygroundPlan,
  startPlaygroundRun,
} from "../../services/playground";
import { approverProcedure, router, viewerProcedure } from "../trpc";

export const playgroundRouter = router({
  /** Mounted modules and the editor's TypeScript declarations for them. */
  modules: viewerProcedure.query(async ({ ctx }) => playgroundModules(await ctx.engine(), ctx.user)),

  /** The user's last code and mode, or null before the first save. */
  state: viewerProcedure.query(({ ctx }) => getPlaygroundState(ctx.db, ctx.user.id)),

  save: viewerProcedure
    .input(playgroundStateSchema)
    .mutation(({ ctx, input }) => savePlaygroundState(ctx.db, ctx.user.id, input)),

  /** Starts the action; follow it with runs.watch({ runId, afterSeq }). */
  run: approverProcedure
    .input(playgroundRunSchema)
    .mutation(async ({ ctx, input }) => startPlaygroundRun(ctx.db, await ctx.engine(), ctx.user, input)),

  /** Asks the approval queue for a whole plan; resolves once the approved run starts. */
  runPlan: approverProcedure
    .input(playgroundPlanSchema)
    .mutation(async ({ ctx, input }) => startPlaygroundPlan(ctx.db, await ctx.engine(), ctx.user, input)),
  /**
   * This tab's toolstore/ui stream: the panes, questions and progress of the runs it started
   * (with its `clientId`), and when each question is settled. No other tab receives them.
   */
  client: viewerProcedure
    .input(z.object({ clientId: z.string().min(8).max(100) }))
    .subscription(async function* ({ ctx, input, signal }) {
      yield* getConsoleClients().connect(input.clientId, ctx.user.id, signal ?? new AbortController().signal);
    }),

  /** The person's answer to a question of this tab (or `decline: true`). */
  answer: approverProcedure
    .input(playgroundAnswerSchema)
    .mutation(({ ctx, input }) => getConsoleClients().answer({ ...input, userId: ctx.user.id })),

  cancel: approverProcedure
    .input(z.object({ runId: z.string().min(1) }))
    .mutation(async ({ ctx, input }) =>
      cancelPlaygroundRun(ctx.db, await ctx.engine(), ctx.user, input.runId),
    ),
});
