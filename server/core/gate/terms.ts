/**
 * The gate's vocabulary: rule effects, condition operators, and what each mode does with each
 * category before rules and grants (step 5 of evaluate.ts). No runtime imports, so the console's
 * client bundle takes the values from here rather than keeping a copy.
 */
import type { Category, Mode } from "../capabilities/types";

export const RULE_EFFECTS = ["allow", "ask", "deny"] as const;
export type RuleEffect = (typeof RULE_EFFECTS)[number];

export const CONDITION_OPS = ["eq", "neq", "startsWith", "contains", "matches"] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

/** What a rule's budget counts over: one run, one session, or a key (or user) per hour or day. */
export const BUDGET_PERIODS = ["run", "session", "hour", "day"] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export type ModeCell = "allow" | "ask" | "blocked";

export const MODE_TABLE: Readonly<Record<Mode, Readonly<Record<Category, ModeCell>>>> = {
  plan: { read: "allow", write: "blocked", execute: "blocked", external: "blocked" },
  default: { read: "allow", write: "ask", execute: "ask", external: "ask" },
  auto: { read: "allow", write: "allow", execute: "allow", external: "allow" },
};
