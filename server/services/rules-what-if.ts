/**
 * What-if over recorded calls: a draft change of the rules (add, edit, remove, a new default
 * mode) is weighed against the gate decisions of the last N recorded calls (or a date range),
 * with today's rules and with the draft, by the same pure evaluation the engine runs. Nothing
 * changes and nothing is recorded. Budgets are not replayed (they depend on the order of calls);
 * a call recorded without its arguments (over 64 KiB, or older than the journal) is weighed with
 * none and flagged.
 */
import { z } from "zod";
import { CATEGORIES, type Category, type JsonValue, MODES, type Mode } from "../core/capabilities/types";
import { AppError } from "../core/errors";
import { evaluateGate, type GateEvaluation } from "../core/gate/evaluate";
import type { PolicyRule } from "../core/gate/rules";
import type { Db } from "../db";
import {
  getDefaultMode,
  listPolicyRules,
  parseRuleInput,
  type RuleInput,
  type RuleRow,
  ruleInputSchema,
  toPolicyRule,
} from "./policy-rules";

export const whatIfDraftSchema = z.object({
  add: z.array(ruleInputSchema).max(50).default([]),
  /** A rule's id and the fields that change. */
  edit: z
    .array(ruleInputSchema.partial().extend({ id: z.string().min(1, "an edit names the rule's id") }))
    .max(50)
    .default([]),
  remove: z.array(z.string().min(1)).max(200).default([]),
  defaultMode: z.enum(MODES).optional(),
});
export type WhatIfDraft = z.input<typeof whatIfDraftSchema>;

export const whatIfInputSchema = z.object({
  draft: whatIfDraftSchema,
  /** The most recent N recorded calls (inside the date range when one is given). */
  last: z.number().int().min(1).max(20_000).default(500),
  since: z.coerce.date().optional(),
  until: z.coerce.date().optional(),
});
export type WhatIfInput = z.input<typeof whatIfInputSchema>;

type Decision = GateEvaluation["decision"];

export interface WhatIfChange {
  decisionId: string;
  runId: string | null;
  at: Date;
  capability: string;
  category: Category;
  mode: Mode;
  args: JsonValue | null;
  /** What the gate recorded at the time. */
  recorded: string;
  before: Decision;
  after: Decision;
  beforeReason: string;
  afterReason: string;
}

export interface WhatIfResult {
  examined: number;
  changed: number;
  /** Calls weighed without their arguments (not recorded). */
  withoutArgs: number;
  transitions: { from: Decision; to: Decision; count: number }[];
  /** The changed calls, newest first (at most 200). */
  changes: WhatIfChange[];
}

const MAX_CHANGES = 200;

function badDraft(error: z.ZodError): AppError {
  return new AppError(
    "BAD_INPUT",
    `the draft is not valid: ${error.issues.map((i) => `${i.path.join(".") || "draft"}: ${i.message}`).join("; ")}`,
  );
}

function asInput(row: RuleRow): RuleInput {
  return {
    effect: row.effect,
    pattern: row.pattern,
    conditions: row.conditions,
    description: row.description,
    enabled: row.enabled,
    versionHash: row.versionHash,
    shadow: row.shadow,
    budget: row.budget,
    examples: row.examples as RuleInput["examples"],
  };
}

/** Today's enabled rules with the draft applied; throws BAD_INPUT naming a rule the draft names wrongly. */
export function applyDraft(
  rows: readonly RuleRow[],
  draft: z.output<typeof whatIfDraftSchema>,
): PolicyRule[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const id of [...draft.remove, ...draft.edit.map((e) => e.id)]) {
    if (!byId.has(id)) throw new AppError("BAD_INPUT", `the draft names rule ${id}, which does not exist`);
  }
  const removed = new Set(draft.remove);
  const edits = new Map(draft.edit.map((e) => [e.id, e]));
  const out: PolicyRule[] = [];
  for (const row of rows) {
    if (removed.has(row.id)) continue;
    const edit = edits.get(row.id);
    if (!edit) {
      if (row.enabled) out.push(toPolicyRule(row));
      continue;
    }
    const { id: _id, ...fields } = edit;
    const merged = { ...asInput(row), ...fields } as RuleInput;
    if (merged.enabled === false) continue;
    out.push(withLabel(parseRuleInput(merged, row.id), `edited rule ${row.id}`));
  }
  draft.add.forEach((input, index) => {
    if (input.enabled === false) return;
    out.push(withLabel(parseRuleInput(input, `draft-${index + 1}`), `draft rule #${index + 1}`));
  });
  return out;
}

function withLabel(rule: PolicyRule, label: string): PolicyRule {
  return rule.description ? rule : { ...rule, description: `${label} ${rule.pattern}` };
}

function parseArgs(text: string | null): JsonValue | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return null;
  }
}

export async function whatIfRules(db: Db, input: WhatIfInput): Promise<WhatIfResult> {
  const parsed = whatIfInputSchema.safeParse(input);
  if (!parsed.success) throw badDraft(parsed.error);
  const { draft, last, since, until } = parsed.data;
  const rows = await listPolicyRules(db);
  const current = rows.filter((r) => r.enabled).map(toPolicyRule);
  const drafted = applyDraft(rows, draft);
  const defaultMode = await getDefaultMode(db);

  const recorded = await db.gateDecisionRecord.findMany({
    where: {
      ...(since || until
        ? { createdAt: { ...(since ? { gte: since } : {}), ...(until ? { lte: until } : {}) } }
        : {}),
    },
    orderBy: { createdAt: "desc" },
    take: last,
    select: {
      id: true,
      runId: true,
      capability: true,
      category: true,
      decision: true,
      reason: true,
      args: true,
      createdAt: true,
      run: { select: { mode: true, surface: true } },
    },
  });
  const names = [...new Set(recorded.map((r) => r.capability))];
  const caps = await db.capability.findMany({
    where: { name: { in: names } },
    select: { name: true, versionHash: true },
  });
  const versions = new Map(caps.map((c) => [c.name, c.versionHash]));

  const transitions = new Map<string, { from: Decision; to: Decision; count: number }>();
  const changes: WhatIfChange[] = [];
  let withoutArgs = 0;
  let changed = 0;
  for (const row of recorded) {
    if (!(CATEGORIES as readonly string[]).includes(row.category)) continue;
    const args = parseArgs(row.args);
    if (args === null) withoutArgs += 1;
    const mode = (MODES as readonly string[]).includes(row.run?.mode ?? "")
      ? (row.run?.mode as Mode)
      : "default";
    // A console session in the default mode moves with the default mode; a key keeps its own.
    const draftMode =
      draft.defaultMode && row.run?.surface === "playground" && mode === defaultMode
        ? draft.defaultMode
        : mode;
    const base = {
      category: row.category as Category,
      capability: row.capability,
      versionHash: versions.get(row.capability) ?? "",
      args: args ?? {},
      hasSessionGrant: row.reason === "allowed for this session",
    };
    const before = evaluateGate({ ...base, mode, rules: current });
    const after = evaluateGate({ ...base, mode: draftMode, rules: drafted });
    if (before.decision === after.decision) continue;
    changed += 1;
    const key = `${before.decision}>${after.decision}`;
    const t = transitions.get(key) ?? { from: before.decision, to: after.decision, count: 0 };
    t.count += 1;
    transitions.set(key, t);
    if (changes.length < MAX_CHANGES) {
      changes.push({
        decisionId: row.id,
        runId: row.runId,
        at: row.createdAt,
        capability: row.capability,
        category: row.category as Category,
        mode,
        args,
        recorded: row.decision,
        before: before.decision,
        after: after.decision,
        beforeReason: before.reason,
        afterReason: after.reason,
      });
    }
  }
  return {
    examined: recorded.length,
    changed,
    withoutArgs,
    transitions: [...transitions.values()].sort((a, b) => b.count - a.count),
    changes,
  };
}
