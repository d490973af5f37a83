import { z } from "zod";
import {
  addEmail,
  addPushSubscription,
  addWebhook,
  removeChannel,
  removePushEndpoint,
  setPreference,
} from "../../services/notifications/channels";
import { notificationFilterSchema } from "../../services/notifications/filter";
import { WEBHOOK_FORMATS } from "../../services/notifications/payloads";
import { assertMayManage, notificationSettings, testChannel } from "../../services/notifications/settings";
import { roleAtLeast } from "../../services/roles";
import { approverProcedure, router, viewerProcedure } from "../trpc";

const id = z.object({ id: z.string().min(1) });

export const notificationsRouter = router({
  settings: viewerProcedure.query(({ ctx }) => notificationSettings(ctx.db, ctx.user)),

  addWebhook: approverProcedure
    .input(
      z.object({
        url: z.string().min(1).max(2000),
        format: z.enum(WEBHOOK_FORMATS),
        secret: z.string().max(200).optional(),
        name: z.string().max(80).optional(),
        /** A team channel (admins): told of every request, not only this user's choice. */
        team: z.boolean().default(false),
      }),
    )
    .mutation(({ ctx, input }) =>
      addWebhook(ctx.db, {
        ...input,
        userId: input.team && roleAtLeast(ctx.user.role, "admin") ? null : ctx.user.id,
      }),
    ),

  addEmail: approverProcedure
    .input(z.object({ address: z.string().min(3).max(200) }))
    .mutation(({ ctx, input }) => addEmail(ctx.db, { address: input.address, userId: ctx.user.id })),

  subscribePush: approverProcedure
    .input(
      z.object({
        endpoint: z.string().url().max(2000),
        keys: z.object({ p256dh: z.string().min(1).max(200), auth: z.string().min(1).max(100) }),
        deviceName: z.string().max(80),
      }),
    )
    .mutation(({ ctx, input }) => addPushSubscription(ctx.db, { ...input, userId: ctx.user.id })),

  unsubscribePush: approverProcedure
    .input(z.object({ endpoint: z.string().url().max(2000) }))
    .mutation(({ ctx, input }) => removePushEndpoint(ctx.db, input.endpoint, ctx.user.id)),

  remove: approverProcedure.input(id).mutation(async ({ ctx, input }) => {
    await assertMayManage(ctx.db, ctx.user, input.id);
    await removeChannel(ctx.db, input.id);
  }),

  setEnabled: approverProcedure
    .input(z.object({ id: z.string().min(1), enabled: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      await assertMayManage(ctx.db, ctx.user, input.id);
      await ctx.db.notificationChannel.update({
        where: { id: input.id },
        data: { enabled: input.enabled, ...(input.enabled ? { lastError: null, lastErrorAt: null } : {}) },
        select: { id: true },
      });
    }),

  test: approverProcedure.input(id).mutation(({ ctx, input }) => testChannel(ctx.db, ctx.user, input.id)),

  setFilter: approverProcedure
    .input(notificationFilterSchema)
    .mutation(({ ctx, input }) => setPreference(ctx.db, ctx.user.id, input)),
});
