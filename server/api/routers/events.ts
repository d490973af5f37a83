import { tracked } from "@trpc/server";
import { z } from "zod";
import { LIVE_EVENT_TYPES } from "../../core/event-types";
import { getEventBus } from "../../infra/live";
import { adminProcedure, router, viewerProcedure } from "../trpc";

export const eventsRouter = router({
  /**
   * Live events for the console's views. `lastEventId` lets the SSE link resume after a
   * reconnect without losing events. `types` takes known event names only: a misspelt one
   * would otherwise subscribe to nothing, silently.
   */
  live: viewerProcedure
    .input(
      z
        .object({ types: z.array(z.enum(LIVE_EVENT_TYPES)).optional(), lastEventId: z.string().nullish() })
        .optional(),
    )
    .subscription(async function* ({ input, signal }) {
      const afterSeq = input?.lastEventId ? Number(input.lastEventId) : undefined;
      for await (const event of getEventBus().subscribe({
        signal: signal ?? new AbortController().signal,
        afterSeq: Number.isFinite(afterSeq) ? afterSeq : undefined,
        types: input?.types,
      })) {
        yield tracked(String(event.seq), event);
      }
    }),

  /** Publish a note to every open console (admin); used to check live updates end to end. */
  announce: adminProcedure
    .input(z.object({ text: z.string().trim().min(1).max(500) }))
    .mutation(async ({ ctx, input }) => {
      await getEventBus().publish("console.announce", { text: input.text, by: ctx.user.username });
      return { ok: true };
    }),
});
