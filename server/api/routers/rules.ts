import { z } from "zod";
import { MODES } from "../../core/capabilities/types";
import {
  createPolicyRule,
  deletePolicyRule,
  getDefaultMode,
  listPolicyRules,
  ruleInputSchema,
  setDefaultMode,
  setPolicyRuleEnabled,
  testCallSchema,
  testGateCall,
  updatePolicyRule,
} from "../../services/policy-rules";
import { whatIfInputSchema, whatIfRules } from "../../services/rules-what-if";
import { adminProcedure, router, viewerProcedure } from "../trpc";

const id = z.object({ id: z.string().min(1) });

export const rulesRouter = router({
  list: viewerProcedure.query(({ ctx }) => listPolicyRules(ctx.db)),
  create: adminProcedure
    .input(ruleInputSchema)
    .mutation(({ ctx, input }) => createPolicyRule(ctx.db, ctx.user.id, input)),
  update: adminProcedure
    .input(id.extend({ rule: ruleInputSchema }))
    .mutation(({ ctx, input }) => updatePolicyRule(ctx.db, input.id, input.rule)),
  setEnabled: adminProcedure
    .input(id.extend({ enabled: z.boolean() }))
    .mutation(({ ctx, input }) => setPolicyRuleEnabled(ctx.db, input.id, input.enabled)),
  delete: adminProcedure.input(id).mutation(({ ctx, input }) => deletePolicyRule(ctx.db, input.id)),
  defaultMode: viewerProcedure.query(({ ctx }) => getDefaultMode(ctx.db)),
  setDefaultMode: adminProcedure
    .input(z.object({ mode: z.enum(MODES) }))
    .mutation(({ ctx, input }) => setDefaultMode(ctx.db, input.mode)),
  /** What the gate would decide for a sample call, and why. Runs nothing, records nothing. */
  testCall: viewerProcedure
    .input(testCallSchema)
    .query(({ ctx, input }) => testGateCall(ctx.db, input, { started: ctx.engine })),
  /** Which recorded calls a draft change of the rules would decide differently. Changes nothing. */
  whatIf: viewerProcedure.input(whatIfInputSchema).query(({ ctx, input }) => whatIfRules(ctx.db, input)),
});
