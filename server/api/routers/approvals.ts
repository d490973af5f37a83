import { z } from "zod";
import { APPROVAL_ANSWERS } from "../../core/gate/approvals";
import {
  countPendingApprovals,
  getApprovalCard,
  historyFilterOptions,
  historyFiltersSchema,
  listApprovalQueue,
  revokeSessionGrants,
} from "../../services/approval-queue";
import { approverProcedure, router, viewerProcedure } from "../trpc";

export const approvalsRouter = router({
  /** Pending requests (each with its run's pre-flight manifest), the filtered history and active session grants. */
  queue: viewerProcedure
    .input(historyFiltersSchema.optional())
    .query(({ ctx, input }) => listApprovalQueue(ctx.db, input ?? {})),

  historyFilterOptions: viewerProcedure.query(({ ctx }) => historyFilterOptions(ctx.db)),

  /** One request by id (the page a notification links to); null when there is none. */
  card: viewerProcedure
    .input(z.object({ id: z.string().min(1).max(100) }))
    .query(({ ctx, input }) => getApprovalCard(ctx.db, input.id)),

  pendingCount: viewerProcedure.query(({ ctx }) => countPendingApprovals(ctx.db)),

  /** Allow once, allow for the session, or deny; CONFLICT when it was already decided or expired. */
  decide: approverProcedure
    .input(z.object({ approvalId: z.string().min(1), answer: z.enum(APPROVAL_ANSWERS) }))
    .mutation(async ({ ctx, input }) => {
      const record = await (await ctx.engine()).approvals.decide({
        approvalId: input.approvalId,
        answer: input.answer,
        decidedBy: { userId: ctx.user.id, label: ctx.user.displayName },
      });
      return { id: record.id, status: record.status, scope: record.scope };
    }),

  revokeSessionGrants: approverProcedure
    .input(z.object({ sessionId: z.string().min(1) }))
    .mutation(({ ctx, input }) => revokeSessionGrants(ctx.db, input.sessionId, ctx.user)),
});
