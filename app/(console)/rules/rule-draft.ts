/**
 * A rule as the form edits it (condition values as typed text) and the conversions to and from
 * the rule the server stores.
 */
import type { JsonValue as Json } from "@/server/core/capabilities/types";
import type { BudgetPeriod, RuleEffect as Effect, ConditionOp as Op } from "@/server/core/gate/terms";

export const BUDGET_LABEL: Record<BudgetPeriod, string> = {
  run: "per run",
  session: "per session",
  hour: "per key per hour",
  day: "per key per day",
};

export const OP_LABEL: Record<Op, string> = {
  eq: "equals",
  neq: "does not equal",
  startsWith: "starts with",
  contains: "contains",
  matches: "matches regex",
};

export interface ConditionDraft {
  /** React's key for the row; not sent. */
  key: number;
  path: string;
  op: Op;
  value: string;
}

export interface RuleDraft {
  effect: Effect;
  pattern: string;
  description: string;
  enabled: boolean;
  versionHash: string;
  conditions: ConditionDraft[];
  /** Log-only: records what it would decide, decides nothing. */
  shadow: boolean;
  /** Empty: no budget. */
  budgetLimit: string;
  budgetPer: BudgetPeriod;
  /** One example call a line: `capability.name {"arg": "value"}`. */
  examplesMatch: string;
  examplesNoMatch: string;
}

export interface ExampleCall {
  capability: string;
  args: Json;
}

/** What the server stores and sends of a rule, as far as the form is concerned. */
export interface StoredRule {
  effect: Effect;
  pattern: string;
  description: string;
  enabled: boolean;
  versionHash: string | null;
  conditions: { path: string; op: Op; value: Json }[];
  shadow?: boolean;
  budget?: { limit: number; per: BudgetPeriod } | null;
  examples?: { match: ExampleCall[]; noMatch: ExampleCall[] } | null;
}

export const EMPTY_RULE: RuleDraft = {
  effect: "ask",
  pattern: "",
  description: "",
  enabled: true,
  versionHash: "",
  conditions: [],
  shadow: false,
  budgetLimit: "",
  budgetPer: "run",
  examplesMatch: "",
  examplesNoMatch: "",
};

/** `capability {json}` lines into calls; throws an Error naming the line that is not one. */
export function parseExampleLines(text: string, label: string): ExampleCall[] {
  const calls: ExampleCall[] = [];
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (!line) return;
    const space = line.search(/\s/);
    const capability = space < 0 ? line : line.slice(0, space);
    const json = space < 0 ? "{}" : line.slice(space).trim();
    let args: unknown;
    try {
      args = JSON.parse(json);
    } catch {
      args = undefined;
    }
    if (!args || typeof args !== "object" || Array.isArray(args)) {
      throw new Error(
        `${label}, line ${index + 1}: write a capability and a JSON object, e.g. http.fetch {"url": "https://x"}`,
      );
    }
    calls.push({ capability, args: args as Json });
  });
  return calls;
}

export function showExampleLines(calls: readonly ExampleCall[] | undefined): string {
  return (calls ?? []).map((c) => `${c.capability} ${JSON.stringify(c.args ?? {})}`).join("\n");
}

let nextKey = 1;

export function newCondition(): ConditionDraft {
  return { key: nextKey++, path: "", op: "startsWith", value: "" };
}

/** eq/neq/contains take any JSON value (42, true, "x"); plain text is a string. */
export function parseValue(op: Op, text: string): Json {
  if (op === "startsWith" || op === "matches") return text;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

/** The text that parseValue turns back into `value`: plain text where that is unambiguous. */
export function showValue(op: Op, value: Json): string {
  if (op === "startsWith" || op === "matches") return String(value);
  return typeof value === "string" && !/^(true|false|null|-?\d.*|\[.*|\{.*|".*)$/.test(value)
    ? value
    : JSON.stringify(value);
}

export function toDraft(rule: StoredRule | null): RuleDraft {
  if (!rule) return EMPTY_RULE;
  return {
    effect: rule.effect,
    pattern: rule.pattern,
    description: rule.description,
    enabled: rule.enabled,
    versionHash: rule.versionHash ?? "",
    shadow: rule.shadow ?? false,
    budgetLimit: rule.budget ? String(rule.budget.limit) : "",
    budgetPer: rule.budget?.per ?? "run",
    examplesMatch: showExampleLines(rule.examples?.match),
    examplesNoMatch: showExampleLines(rule.examples?.noMatch),
    conditions: rule.conditions.map((c) => ({
      key: nextKey++,
      path: c.path,
      op: c.op,
      value: showValue(c.op, c.value),
    })),
  };
}

export function fromDraft(draft: RuleDraft): StoredRule {
  const match = parseExampleLines(draft.examplesMatch, "Must match");
  const noMatch = parseExampleLines(draft.examplesNoMatch, "Must not match");
  const limit = draft.budgetLimit.trim();
  return {
    shadow: draft.shadow,
    budget: limit ? { limit: Number(limit), per: draft.budgetPer } : null,
    examples: match.length || noMatch.length ? { match, noMatch } : null,
    effect: draft.effect,
    pattern: draft.pattern.trim(),
    description: draft.description,
    enabled: draft.enabled,
    versionHash: draft.versionHash.trim() || null,
    conditions: draft.conditions.map((c) => ({
      path: c.path.trim(),
      op: c.op,
      value: parseValue(c.op, c.value),
    })),
  };
}
