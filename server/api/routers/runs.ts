import { tracked } from "@trpc/server";
import { z } from "zod";
import { watchRun } from "../../services/run-watch";
import { getRunDetail } from "../../services/runs";
import { router, viewerProcedure } from "../trpc";

export const runsRouter = router({
  get: viewerProcedure
    .input(z.object({ id: z.string().min(1) }))
    .query(({ ctx, input }) => getRunDetail(ctx.db, input.id)),

  /**
   * One run's events after `afterSeq`, then its envelope; `lastEventId` resumes after a
   * reconnect, so a run that waits minutes for a human stays followed.
   */
  watch: viewerProcedure
    .input(
      z.object({
        runId: z.string().min(1),
        afterSeq: z.number().int().min(0),
        lastEventId: z.string().nullish(),
      }),
    )
    .subscription(async function* ({ ctx, input, signal }) {
      const resumed = input.lastEventId ? Number(input.lastEventId) : Number.NaN;
      for await (const item of watchRun(ctx.db, {
        runId: input.runId,
        afterSeq: Number.isFinite(resumed) ? resumed : input.afterSeq,
        signal: signal ?? new AbortController().signal,
      })) {
        yield tracked(String(item.seq), item);
      }
    }),
});
