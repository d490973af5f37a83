/**
 * Policy rules: an effect, a glob on capability names, optional argument conditions, and an
 * optional version pin. A rule may be log-only (`shadow`), carry a budget (it then decides only
 * the calls over it), and carry example calls that must and must not match (checked on save).
 * Pure functions; the gate decides precedence (evaluate.ts).
 */

import { canonicalJson } from "../capabilities/snapshot";
import type { JsonValue } from "../capabilities/types";
import { AppError } from "../errors";

import {
  BUDGET_PERIODS,
  type BudgetPeriod,
  CONDITION_OPS,
  type ConditionOp,
  RULE_EFFECTS,
  type RuleEffect,
} from "./terms";

export { BUDGET_PERIODS, type BudgetPeriod, CONDITION_OPS, type ConditionOp, RULE_EFFECTS, type RuleEffect };

/**
 * How often the calls a rule matches may run: per run, per session, or per key (the user when
 * there is no key) per hour or day. A call over it gets the rule's effect (ask or deny).
 */
export interface RuleBudget {
  limit: number;
  per: BudgetPeriod;
}

/** An example call: the capability name and its arguments. */
export interface RuleExampleCall {
  capability: string;
  args: JsonValue;
}

export interface RuleExamples {
  /** Calls the rule must match. */
  match: RuleExampleCall[];
  /** Calls the rule must not match. */
  noMatch: RuleExampleCall[];
}

export interface RuleCondition {
  /** Dot path into the arguments: `url`, `options.mode`, `items.0.name`. */
  path: string;
  op: ConditionOp;
  value: JsonValue;
}

export interface PolicyRule {
  id: string;
  effect: RuleEffect;
  /** Glob on the capability name: `*` any run of characters, `?` one character. `weather.*`, `http.fetch`, `*`. */
  pattern: string;
  /** All must hold. Empty: the rule matches on the name alone. */
  conditions: RuleCondition[];
  /** When set, the rule applies only to this code version of the capability. */
  versionHash?: string | null;
  description?: string;
  /** How long an approval this (ask) rule requests may wait, in minutes (up to 7 days). */
  approvalTtlMinutes?: number | null;
  /** Log-only: decides nothing; a call it would have decided differently is recorded as a shadow hit. */
  shadow?: boolean;
  /** Set: the rule decides only the calls over this budget (with its effect, ask or deny). */
  budget?: RuleBudget | null;
  examples?: RuleExamples | null;
}

const globCache = new Map<string, RegExp>();

export function globToRegExp(pattern: string): RegExp {
  let re = globCache.get(pattern);
  if (!re) {
    const body = pattern
      .split("")
      .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&")))
      .join("");
    re = new RegExp(`^${body}$`);
    if (globCache.size > 1000) globCache.clear();
    globCache.set(pattern, re);
  }
  return re;
}

const regexCache = new Map<string, RegExp>();

function conditionRegExp(source: string): RegExp {
  let re = regexCache.get(source);
  if (!re) {
    re = new RegExp(source, "u");
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(source, re);
  }
  return re;
}

/** Checks a rule an admin wrote; throws AppError BAD_INPUT naming the problem. */
export function validateRule(rule: PolicyRule): void {
  if (!RULE_EFFECTS.includes(rule.effect)) {
    throw new AppError("BAD_INPUT", `rule effect must be one of ${RULE_EFFECTS.join(", ")}`);
  }
  if (!rule.pattern || /\s/.test(rule.pattern)) {
    throw new AppError("BAD_INPUT", "rule pattern must be a capability name or glob such as `weather.*`");
  }
  for (const c of rule.conditions) {
    if (!c.path || typeof c.path !== "string")
      throw new AppError("BAD_INPUT", "every condition needs a path");
    if (!CONDITION_OPS.includes(c.op)) {
      throw new AppError("BAD_INPUT", `condition op must be one of ${CONDITION_OPS.join(", ")}`);
    }
    if ((c.op === "startsWith" || c.op === "matches") && typeof c.value !== "string") {
      throw new AppError("BAD_INPUT", `condition ${c.op} on ${c.path} needs a string value`);
    }
    if (c.op === "matches") {
      try {
        conditionRegExp(c.value as string);
      } catch (error) {
        throw new AppError(
          "BAD_INPUT",
          `condition on ${c.path}: invalid regular expression: ${(error as Error).message}`,
        );
      }
    }
  }
  validateBudget(rule);
  checkRuleExamples(rule);
}

const MAX_BUDGET = 1_000_000;

function validateBudget(rule: PolicyRule): void {
  const budget = rule.budget;
  if (!budget) return;
  if (!Number.isInteger(budget.limit) || budget.limit < 1 || budget.limit > MAX_BUDGET) {
    throw new AppError("BAD_INPUT", `budget limit must be a whole number from 1 to ${MAX_BUDGET}`);
  }
  if (!BUDGET_PERIODS.includes(budget.per)) {
    throw new AppError("BAD_INPUT", `budget period must be one of ${BUDGET_PERIODS.join(", ")}`);
  }
  if (rule.shadow) {
    throw new AppError("BAD_INPUT", "a budget rule cannot be log-only: clear one of budget or log-only");
  }
  if (rule.effect === "allow") {
    throw new AppError(
      "BAD_INPUT",
      "a budget rule says what happens over the budget: its effect must be ask or deny, not allow",
    );
  }
}

function exampleLabel(kind: "match" | "noMatch", index: number, call: RuleExampleCall): string {
  const args = canonicalJson(call.args ?? {});
  const shown = args.length > 120 ? `${args.slice(0, 117)}...` : args;
  return `example ${kind === "match" ? "that must match" : "that must not match"} #${index + 1} (${call.capability} ${shown})`;
}

/**
 * Runs the rule's example calls against it; throws AppError BAD_INPUT naming the first that fails.
 * The version pin is not part of an example (examples name calls, not code versions).
 */
export function checkRuleExamples(rule: PolicyRule): void {
  const examples = rule.examples;
  if (!examples) return;
  const unpinned = { ...rule, versionHash: null };
  const cases: ["match" | "noMatch", RuleExampleCall[]][] = [
    ["match", examples.match ?? []],
    ["noMatch", examples.noMatch ?? []],
  ];
  for (const [kind, calls] of cases) {
    calls.forEach((call, index) => {
      if (!call || typeof call.capability !== "string" || !call.capability) {
        throw new AppError("BAD_INPUT", `${kind} example #${index + 1} needs a capability name`);
      }
      const matched = ruleMatches(unpinned, {
        capability: call.capability,
        versionHash: "",
        args: call.args ?? {},
      });
      if (matched !== (kind === "match")) {
        throw new AppError(
          "BAD_INPUT",
          `${exampleLabel(kind, index, call)} ${matched ? "matches the rule" : "does not match the rule"}; fix the rule or the example`,
          { details: { example: kind, index } },
        );
      }
    });
  }
}

function readPath(args: JsonValue, path: string): JsonValue | undefined {
  let cur: JsonValue | undefined = args;
  for (const part of path.split(".")) {
    if (cur === null || cur === undefined || typeof cur !== "object") return undefined;
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(part)) return undefined;
      cur = cur[Number(part)];
    } else {
      cur = Object.hasOwn(cur, part) ? cur[part] : undefined;
    }
  }
  return cur;
}

function sameJson(a: JsonValue | undefined, b: JsonValue): boolean {
  if (a === undefined) return false;
  if (typeof a !== "object" || a === null) return a === b;
  return canonicalJson(a) === canonicalJson(b);
}

export function conditionHolds(condition: RuleCondition, args: JsonValue): boolean {
  const actual = readPath(args, condition.path);
  switch (condition.op) {
    case "eq":
      return sameJson(actual, condition.value);
    case "neq":
      return !sameJson(actual, condition.value);
    case "startsWith":
      return (
        typeof actual === "string" &&
        typeof condition.value === "string" &&
        actual.startsWith(condition.value)
      );
    case "contains":
      if (typeof actual === "string")
        return typeof condition.value === "string" && actual.includes(condition.value);
      if (Array.isArray(actual)) return actual.some((item) => sameJson(item, condition.value));
      return false;
    case "matches":
      try {
        return typeof actual === "string" && conditionRegExp(String(condition.value)).test(actual);
      } catch {
        return false;
      }
  }
}

export interface RuleTarget {
  capability: string;
  versionHash: string;
  args: JsonValue;
}

export function ruleMatches(rule: PolicyRule, target: RuleTarget): boolean {
  if (rule.versionHash && rule.versionHash !== target.versionHash) return false;
  if (!globToRegExp(rule.pattern).test(target.capability)) return false;
  return rule.conditions.every((c) => conditionHolds(c, target.args));
}
