/**
 * The gate's decision table, as a pure function:
 *
 *   1. a deny rule matches              -> deny    (also in auto)
 *   2. plan mode and category != read   -> blocked (no rule unblocks plan mode)
 *   3. an ask rule matches              -> ask     (a session grant does not skip it)
 *   4. an allow rule matches            -> allow
 *   5. mode x category                  -> read: allow; auto: allow; default: ask
 *   6. default-mode ask + session grant -> allow
 *
 * Rules with a versionHash only match that version of the capability's code. Log-only (shadow)
 * rules and budget rules take no part here: shadowVerdicts says what a shadow rule would have
 * changed, and the gate counts budgets (trials.ts) on top of this decision.
 */
import type { Category, JsonValue, Mode } from "../capabilities/types";
import { type PolicyRule, ruleMatches } from "./rules";
import { MODE_TABLE } from "./terms";

export type GateEvaluation =
  | { decision: "allow"; reason: string; ruleId: string | null; via: "rule" | "mode" | "grant" }
  | { decision: "deny"; reason: string; ruleId: string; via: "rule" }
  | { decision: "blocked"; reason: string; ruleId: null; via: "mode" }
  | {
      decision: "ask";
      reason: string;
      ruleId: string | null;
      via: "rule" | "mode";
      sessionGrantable: boolean;
    };

export interface GateInput {
  mode: Mode;
  category: Category;
  capability: string;
  versionHash: string;
  args: JsonValue;
  rules: readonly PolicyRule[];
  /** Whether the session holds a grant for this capability and version (consulted in step 6 only). */
  hasSessionGrant: boolean;
}

function ruleLabel(rule: PolicyRule): string {
  return rule.description ? `rule "${rule.description}"` : `rule ${rule.pattern} (${rule.id})`;
}

function targetOf(input: GateInput) {
  return { capability: input.capability, versionHash: input.versionHash, args: input.args };
}

/** Rules that decide: neither log-only nor budget rules. */
function deciding(rules: readonly PolicyRule[]): PolicyRule[] {
  return rules.filter((rule) => !rule.shadow && !rule.budget);
}

export function evaluateGate(input: GateInput): GateEvaluation {
  const target = targetOf(input);
  const matching = deciding(input.rules).filter((rule) => ruleMatches(rule, target));
  const deny = matching.find((r) => r.effect === "deny");
  if (deny) return { decision: "deny", reason: `denied by ${ruleLabel(deny)}`, ruleId: deny.id, via: "rule" };

  const cell = MODE_TABLE[input.mode][input.category];
  if (cell === "blocked") {
    return {
      decision: "blocked",
      reason: `${input.category} capabilities are blocked in plan mode`,
      ruleId: null,
      via: "mode",
    };
  }

  const ask = matching.find((r) => r.effect === "ask");
  if (ask) {
    return {
      decision: "ask",
      reason: `approval required by ${ruleLabel(ask)}`,
      ruleId: ask.id,
      via: "rule",
      sessionGrantable: false,
    };
  }
  const allow = matching.find((r) => r.effect === "allow");
  if (allow)
    return { decision: "allow", reason: `allowed by ${ruleLabel(allow)}`, ruleId: allow.id, via: "rule" };

  if (cell === "allow") {
    const reason =
      input.category === "read" ? "read capabilities run without approval" : `${input.mode} mode`;
    return { decision: "allow", reason, ruleId: null, via: "mode" };
  }
  if (input.hasSessionGrant) {
    return { decision: "allow", reason: "allowed for this session", ruleId: null, via: "grant" };
  }
  return {
    decision: "ask",
    reason: `${input.category} capabilities need approval in ${input.mode} mode`,
    ruleId: null,
    via: "mode",
    sessionGrantable: true,
  };
}

export interface ShadowVerdict {
  ruleId: string;
  /** What the gate decided. */
  decision: GateEvaluation["decision"];
  /** What it would have decided with this log-only rule enforced. */
  would: GateEvaluation["decision"];
}

/** Each matching log-only rule that, enforced, would have changed `actual`'s decision. */
export function shadowVerdicts(input: GateInput, actual: GateEvaluation): ShadowVerdict[] {
  const target = targetOf(input);
  const enforced = deciding(input.rules);
  const out: ShadowVerdict[] = [];
  for (const rule of input.rules) {
    if (!rule.shadow || rule.budget || !ruleMatches(rule, target)) continue;
    const would = evaluateGate({ ...input, rules: [...enforced, { ...rule, shadow: false }] });
    if (would.decision !== actual.decision) {
      out.push({ ruleId: rule.id, decision: actual.decision, would: would.decision });
    }
  }
  return out;
}

/** The enforced budget rules that match this call. */
export function matchingBudgets(input: GateInput): PolicyRule[] {
  const target = targetOf(input);
  return input.rules.filter((rule) => rule.budget && !rule.shadow && ruleMatches(rule, target));
}
