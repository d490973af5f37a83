/**
 * Policy you can try before you trust it, on top of the gate's decision (evaluate.ts): log-only
 * rules record what they would have decided, an approved plan answers exactly its own calls, and
 * budget rules cap how often the calls they match run. Budgets are counted in a store (the
 * database), so a per-key hourly cap holds across runs and instances.
 */
import type { ArgsSnapshot } from "../capabilities/snapshot";
import type { Session } from "../capabilities/types";
import { type GateEvaluation, type GateInput, matchingBudgets, shadowVerdicts } from "./evaluate";
import type { Clock } from "./ports";
import type { BudgetPeriod, PolicyRule } from "./rules";

export interface BudgetKey {
  ruleId: string;
  /** `run:<id>`, `session:<id>`, `key:<id>` or `user:<id>`. */
  scope: string;
  /** Start of the hour or day (UTC, ISO prefix); "" for run and session budgets. */
  window: string;
}

export interface BudgetStore {
  /** Takes one call of the budget if one is left, atomically across instances; false when spent. */
  take(key: BudgetKey, limit: number): Promise<boolean>;
}

export interface ShadowHit {
  ruleId: string;
  runId: string | null;
  sessionId: string;
  capability: string;
  argsHash: string;
  decision: GateEvaluation["decision"];
  would: GateEvaluation["decision"];
  at: number;
}

export interface ShadowSink {
  record(hits: ShadowHit[]): Promise<void>;
}

/** Which budget a call went over; the guest's error carries it. */
export interface BudgetHit {
  ruleId: string;
  pattern: string;
  limit: number;
  per: BudgetPeriod;
}

/** An approved plan, for the one run it was approved for: each planned call is answered once. */
export interface PlanGrant {
  /** The plan (the id of the plan-mode run that made it). */
  planId: string;
  /** The approval that granted it (recorded with every call it covers). */
  approvalId: string;
  /** Takes the planned call with this capability and argument hash, if one is left: its id. */
  take(capability: string, argsHash: string): string | null;
}

export interface TrialDeps {
  budgets?: BudgetStore;
  shadows?: ShadowSink;
  clock: Clock;
}

export interface TrialSubject {
  runId: string | null;
  session: Session;
  plan?: PlanGrant;
}

export interface TrialOutcome {
  evaluation: GateEvaluation;
  /** The plan approval, when the plan answered the call. */
  approvalId: string | null;
  budget: BudgetHit | null;
}

export function budgetKey(rule: PolicyRule, subject: TrialSubject, now: number): BudgetKey {
  const per = rule.budget?.per ?? "run";
  const session = subject.session;
  if (per === "run")
    return { ruleId: rule.id, scope: `run:${subject.runId ?? `direct:${session.id}`}`, window: "" };
  if (per === "session") return { ruleId: rule.id, scope: `session:${session.id}`, window: "" };
  const scope = session.apiKeyId ? `key:${session.apiKeyId}` : `user:${session.userId}`;
  const iso = new Date(now).toISOString();
  return { ruleId: rule.id, scope, window: per === "hour" ? iso.slice(0, 13) : iso.slice(0, 10) };
}

function budgetReason(rule: PolicyRule): string {
  const budget = rule.budget ?? { limit: 0, per: "run" };
  const per =
    budget.per === "run" || budget.per === "session" ? `per ${budget.per}` : `per key per ${budget.per}`;
  const label = rule.description ? `rule "${rule.description}"` : `rule ${rule.pattern} (${rule.id})`;
  return `over budget: ${rule.pattern} may run ${budget.limit} times ${per} (${label})`;
}

/** Takes a call from every matching budget; the first one spent decides (the rule's effect). */
async function applyBudgets(
  deps: TrialDeps,
  subject: TrialSubject,
  input: GateInput,
  evaluation: GateEvaluation,
): Promise<{ evaluation: GateEvaluation; budget: BudgetHit | null }> {
  if (!deps.budgets || (evaluation.decision !== "allow" && evaluation.decision !== "ask")) {
    return { evaluation, budget: null };
  }
  const now = deps.clock.now();
  for (const rule of matchingBudgets(input)) {
    const limit = rule.budget?.limit ?? 0;
    if (await deps.budgets.take(budgetKey(rule, subject, now), limit)) continue;
    const budget: BudgetHit = {
      ruleId: rule.id,
      pattern: rule.pattern,
      limit,
      per: rule.budget?.per ?? "run",
    };
    const reason = budgetReason(rule);
    if (rule.effect === "deny")
      return { evaluation: { decision: "deny", reason, ruleId: rule.id, via: "rule" }, budget };
    return {
      evaluation: { decision: "ask", reason, ruleId: rule.id, via: "rule", sessionGrantable: false },
      budget,
    };
  }
  return { evaluation, budget: null };
}

export async function applyTrials(
  deps: TrialDeps,
  subject: TrialSubject,
  snapshot: ArgsSnapshot,
  input: GateInput,
  decided: GateEvaluation,
): Promise<TrialOutcome> {
  if (deps.shadows) {
    const verdicts = shadowVerdicts(input, decided);
    if (verdicts.length > 0) {
      const at = deps.clock.now();
      await deps.shadows.record(
        verdicts.map((v) => ({
          ...v,
          runId: subject.runId,
          sessionId: subject.session.id,
          capability: input.capability,
          argsHash: snapshot.hash,
          at,
        })),
      );
    }
  }
  let evaluation = decided;
  let approvalId: string | null = null;
  if (evaluation.decision === "ask" && subject.plan) {
    const callId = subject.plan.take(input.capability, snapshot.hash);
    if (callId) {
      approvalId = subject.plan.approvalId;
      evaluation = {
        decision: "allow",
        reason: `covered by the approved plan ${subject.plan.planId} (call ${callId})`,
        ruleId: evaluation.ruleId,
        via: "grant",
      };
    }
  }
  const budgeted = await applyBudgets(deps, subject, input, evaluation);
  return { ...budgeted, approvalId: budgeted.budget ? null : approvalId };
}
