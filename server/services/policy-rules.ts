/**
 * Policy rules and the default mode, as the console edits them, and "test a call": what the gate
 * would decide for a sample call and why, from the same pure evaluation the engine runs
 * (core/gate/evaluate.ts). Nothing runs and nothing is recorded.
 */
import { z } from "zod";
import { CATEGORIES, type Category, type JsonValue, MODES, type Mode } from "../core/capabilities/types";
import { AppError } from "../core/errors";
import { evaluateGate, type GateEvaluation } from "../core/gate/evaluate";
import {
  BUDGET_PERIODS,
  CONDITION_OPS,
  conditionHolds,
  globToRegExp,
  type PolicyRule,
  RULE_EFFECTS,
  type RuleBudget,
  type RuleCondition,
  type RuleExamples,
  validateRule,
} from "../core/gate/rules";
import { MODE_TABLE } from "../core/gate/terms";
import type { Db } from "../db";

export const DEFAULT_MODE_KEY = "defaultMode";

const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([
    z.null(),
    z.boolean(),
    z.number(),
    z.string(),
    z.array(jsonValue),
    z.record(z.string(), jsonValue),
  ]),
);

export const ruleConditionSchema = z.object({
  path: z
    .string()
    .trim()
    .min(1, "every condition needs an argument path")
    .max(200)
    .regex(/^[\w$-]+(\.[\w$-]+)*$/, "a path is argument names joined by dots, e.g. url or options.mode"),
  op: z.enum(CONDITION_OPS),
  value: jsonValue,
});

const exampleCallSchema = z.object({
  capability: z.string().trim().min(1, "an example names a capability").max(200),
  args: jsonValue.default({}),
});

export const ruleBudgetSchema = z.object({
  limit: z.number().int("a budget limit is a whole number").min(1).max(1_000_000),
  per: z.enum(BUDGET_PERIODS),
});

export const ruleExamplesSchema = z.object({
  match: z.array(exampleCallSchema).max(20).default([]),
  noMatch: z.array(exampleCallSchema).max(20).default([]),
});

export const ruleInputSchema = z.object({
  effect: z.enum(RULE_EFFECTS),
  pattern: z
    .string()
    .trim()
    .min(1, "pattern is required")
    .max(200)
    .regex(/^\S+$/, "a pattern has no spaces: weather.*, http.fetch or *"),
  conditions: z.array(ruleConditionSchema).max(20).default([]),
  description: z.string().trim().max(200).default(""),
  enabled: z.boolean().default(true),
  versionHash: z.string().trim().max(128).nullish(),
  /** Log-only: records what it would decide, decides nothing. */
  shadow: z.boolean().default(false),
  budget: ruleBudgetSchema.nullish(),
  examples: ruleExamplesSchema.nullish(),
});
export type RuleInput = z.input<typeof ruleInputSchema>;

export interface RuleRow {
  id: string;
  effect: PolicyRule["effect"];
  pattern: string;
  conditions: RuleCondition[];
  description: string;
  enabled: boolean;
  versionHash: string | null;
  shadow: boolean;
  budget: RuleBudget | null;
  examples: RuleExamples | null;
  /** Calls this log-only rule would have decided differently (all time). */
  shadowHits: number;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const RULE_SELECT = {
  id: true,
  effect: true,
  pattern: true,
  conditions: true,
  description: true,
  enabled: true,
  versionHash: true,
  shadow: true,
  budget: true,
  examples: true,
  createdById: true,
  createdAt: true,
  updatedAt: true,
} as const;

type StoredRule = {
  id: string;
  effect: string;
  pattern: string;
  conditions: string;
  description: string;
  enabled: boolean;
  versionHash: string | null;
  shadow: boolean;
  budget: string | null;
  examples: string | null;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
};

function parseJsonOrNull<T>(text: string | null): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

function parseConditions(text: string): RuleCondition[] {
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? (value as RuleCondition[]) : [];
  } catch {
    return [];
  }
}

function toRuleRow(
  row: StoredRule,
  names: ReadonlyMap<string, string>,
  hits: ReadonlyMap<string, number> = new Map(),
): RuleRow {
  return {
    id: row.id,
    effect: row.effect as PolicyRule["effect"],
    pattern: row.pattern,
    conditions: parseConditions(row.conditions),
    description: row.description,
    enabled: row.enabled,
    versionHash: row.versionHash,
    shadow: row.shadow,
    budget: parseJsonOrNull<RuleBudget>(row.budget),
    examples: parseJsonOrNull<RuleExamples>(row.examples),
    shadowHits: hits.get(row.id) ?? 0,
    createdBy: row.createdById ? (names.get(row.createdById) ?? null) : null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function toPolicyRule(row: RuleRow): PolicyRule {
  return {
    id: row.id,
    effect: row.effect,
    pattern: row.pattern,
    conditions: row.conditions,
    versionHash: row.versionHash,
    description: row.description,
    shadow: row.shadow,
    budget: row.budget,
    examples: row.examples,
  };
}

/** Parses and checks a rule as the form sends it (examples included); throws BAD_INPUT naming the problem. */
export function parseRuleInput(input: RuleInput, id = "new"): PolicyRule {
  const parsed = ruleInputSchema.safeParse(input);
  if (!parsed.success) {
    throw new AppError(
      "BAD_INPUT",
      parsed.error.issues.map((i) => `${i.path.join(".") || "rule"}: ${i.message}`).join("; "),
    );
  }
  const data = parsed.data;
  const rule: PolicyRule = {
    id,
    effect: data.effect,
    pattern: data.pattern,
    conditions: data.conditions as RuleCondition[],
    versionHash: data.versionHash || null,
    description: data.description,
    shadow: data.shadow,
    budget: data.budget ?? null,
    examples: data.examples ?? null,
  };
  validateRule(rule);
  return rule;
}

function ruleColumns(input: RuleInput) {
  const rule = parseRuleInput(input);
  const hasExamples = rule.examples && (rule.examples.match.length > 0 || rule.examples.noMatch.length > 0);
  // The columns a create and an update write alike.
  return {
    effect: rule.effect,
    pattern: rule.pattern,
    conditions: JSON.stringify(rule.conditions),
    description: rule.description ?? "",
    enabled: input.enabled ?? true,
    versionHash: rule.versionHash ?? null,
    shadow: rule.shadow ?? false,
    budget: rule.budget ? JSON.stringify(rule.budget) : null,
    examples: hasExamples ? JSON.stringify(rule.examples) : null,
  };
}

async function userNames(db: Db, ids: (string | null)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => Boolean(id)))];
  if (wanted.length === 0) return new Map();
  const users = await db.user.findMany({
    where: { id: { in: wanted } },
    select: { id: true, username: true },
  });
  return new Map(users.map((u) => [u.id, u.username]));
}

/** Every rule, deny first, then ask, then allow (the order in which the gate weighs them). */
export async function listPolicyRules(db: Db): Promise<RuleRow[]> {
  const rows = await db.policyRule.findMany({ orderBy: { createdAt: "asc" }, select: RULE_SELECT });
  const names = await userNames(
    db,
    rows.map((r) => r.createdById),
  );
  const counted = await db.policyShadowHit.groupBy({
    by: ["ruleId"],
    where: { ruleId: { in: rows.filter((r) => r.shadow).map((r) => r.id) } },
    _count: { _all: true },
  });
  const hits = new Map(counted.map((c) => [c.ruleId, c._count._all]));
  const rank = { deny: 0, ask: 1, allow: 2 } as Record<string, number>;
  return rows
    .map((r) => toRuleRow(r, names, hits))
    .sort((a, b) => (rank[a.effect] ?? 3) - (rank[b.effect] ?? 3));
}

export async function createPolicyRule(db: Db, userId: string, input: RuleInput): Promise<RuleRow> {
  const data = ruleColumns(input);
  const row = await db.policyRule.create({
    data: { ...data, createdById: userId },
    select: RULE_SELECT,
  });
  return toRuleRow(row, await userNames(db, [row.createdById]));
}

export async function updatePolicyRule(db: Db, id: string, input: RuleInput): Promise<RuleRow> {
  const data = ruleColumns(input);
  const { count } = await db.policyRule.updateMany({
    where: { id },
    data,
  });
  if (count === 0) throw new AppError("NOT_FOUND", "No such rule; it may have been deleted.");
  const row = await db.policyRule.findUniqueOrThrow({ where: { id }, select: RULE_SELECT });
  return toRuleRow(row, await userNames(db, [row.createdById]));
}

export async function setPolicyRuleEnabled(db: Db, id: string, enabled: boolean): Promise<void> {
  const { count } = await db.policyRule.updateMany({ where: { id }, data: { enabled } });
  if (count === 0) throw new AppError("NOT_FOUND", "No such rule; it may have been deleted.");
}

export async function deletePolicyRule(db: Db, id: string): Promise<void> {
  const { count } = await db.policyRule.deleteMany({ where: { id } });
  if (count === 0) throw new AppError("NOT_FOUND", "No such rule; it may have been deleted.");
}

/** The mode new console sessions start in; `default` when none was chosen. */
export async function getDefaultMode(db: Db): Promise<Mode> {
  const row = await db.setting.findUnique({ where: { key: DEFAULT_MODE_KEY }, select: { value: true } });
  return (MODES as readonly string[]).includes(row?.value ?? "") ? (row?.value as Mode) : "default";
}

export async function setDefaultMode(db: Db, mode: Mode): Promise<Mode> {
  if (!(MODES as readonly string[]).includes(mode)) {
    throw new AppError("BAD_INPUT", `mode must be one of ${MODES.join(", ")}`);
  }
  await db.setting.upsert({
    where: { key: DEFAULT_MODE_KEY },
    create: { key: DEFAULT_MODE_KEY, value: mode },
    update: { value: mode },
  });
  return mode;
}

export const testCallSchema = z.object({
  capability: z.string().trim().min(1, "pick a capability").max(200),
  /** JSON text of the arguments object, as typed in the console. */
  argsJson: z.string().max(100_000).default("{}"),
  mode: z.enum(MODES),
  /** Pretend the session already holds an "allow for session" grant. */
  withSessionGrant: z.boolean().default(false),
});
export type TestCallInput = z.input<typeof testCallSchema>;

export interface RuleTrace {
  id: string;
  effect: PolicyRule["effect"];
  pattern: string;
  description: string;
  nameMatches: boolean;
  /** null when the rule has no version pin. */
  versionMatches: boolean | null;
  conditions: { path: string; op: string; value: JsonValue; holds: boolean }[];
  matches: boolean;
}

export interface TestCallResult {
  capability: string;
  category: Category;
  versionHash: string;
  mode: Mode;
  evaluation: GateEvaluation;
  /** What the mode x category table alone would say, before rules. */
  tableCell: "allow" | "ask" | "blocked";
  /** Every enabled rule, whether it matched and which of its parts held. */
  rules: RuleTrace[];
}

/** What the gate would decide for this call, and which rule or table cell decided it. */
export async function testGateCall(
  db: Db,
  input: TestCallInput,
  options: { started?: () => Promise<unknown> } = {},
): Promise<TestCallResult> {
  // Built-in capabilities get their rows when the engine starts; a fresh instance waits for it.
  await options.started?.();
  const parsed = testCallSchema.safeParse(input);
  if (!parsed.success) throw new AppError("BAD_INPUT", parsed.error.issues.map((i) => i.message).join("; "));
  const { capability, argsJson, mode, withSessionGrant } = parsed.data;
  let args: JsonValue;
  try {
    args = JSON.parse(argsJson.trim() || "{}") as JsonValue;
  } catch (error) {
    throw new AppError("BAD_INPUT", `arguments are not valid JSON: ${(error as Error).message}`);
  }
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    throw new AppError("BAD_INPUT", 'arguments must be one JSON object, e.g. { "url": "https://..." }');
  }
  const cap = await db.capability.findUnique({
    where: { name: capability },
    select: { name: true, category: true, versionHash: true, active: true },
  });
  if (!cap?.active) {
    throw new AppError("CAPABILITY_UNKNOWN", `unknown capability "${capability}"`, {
      details: { capability },
    });
  }
  if (!(CATEGORIES as readonly string[]).includes(cap.category)) {
    throw new AppError("CATEGORY_REQUIRED", `capability "${capability}" has no valid category`);
  }
  const category = cap.category as Category;
  const enabled = (await listPolicyRules(db)).filter((r) => r.enabled);
  const rules = enabled.map(toPolicyRule);
  const evaluation = evaluateGate({
    mode,
    category,
    capability: cap.name,
    versionHash: cap.versionHash,
    args,
    rules,
    hasSessionGrant: withSessionGrant,
  });
  const traces = rules.map((rule): RuleTrace => {
    const nameMatches = globToRegExp(rule.pattern).test(cap.name);
    const versionMatches = rule.versionHash ? rule.versionHash === cap.versionHash : null;
    const conditions = rule.conditions.map((c) => ({ ...c, holds: conditionHolds(c, args) }));
    return {
      id: rule.id,
      effect: rule.effect,
      pattern: rule.pattern,
      description: rule.description ?? "",
      nameMatches,
      versionMatches,
      conditions,
      matches: nameMatches && versionMatches !== false && conditions.every((c) => c.holds),
    };
  });
  return {
    capability: cap.name,
    category,
    versionHash: cap.versionHash,
    mode,
    evaluation,
    tableCell: MODE_TABLE[mode][category],
    rules: traces,
  };
}
