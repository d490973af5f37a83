/**
 * A rule as the form edits it (condition values as typed text) and the conversions to and from
 * the rule the server stores.
 */
import type { JsonValue as Json } from "@/server/core/capabilities/types";
import type { RuleEffect as Effect, ConditionOp as Op } from "@/server/core/gate/terms";

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
}

/** What the server stores and sends of a rule, as far as the form is concerned. */
export interface StoredRule {
  effect: Effect;
  pattern: string;
  description: string;
  enabled: boolean;
  versionHash: string | null;
  conditions: { path: string; op: Op; value: Json }[];
}

export const EMPTY_RULE: RuleDraft = {
  effect: "ask",
  pattern: "",
  description: "",
  enabled: true,
  versionHash: "",
  conditions: [],
};

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
    conditions: rule.conditions.map((c) => ({
      key: nextKey++,
      path: c.path,
      op: c.op,
      value: showValue(c.op, c.value),
    })),
  };
}

export function fromDraft(draft: RuleDraft): StoredRule {
  return {
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
