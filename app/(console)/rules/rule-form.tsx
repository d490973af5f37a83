"use client";
/** The form that adds a rule or edits one: effect, pattern, description, argument conditions. */
import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useEffect, useRef, useState } from "react";
import {
  BUDGET_PERIODS,
  type BudgetPeriod,
  RULE_EFFECTS as EFFECTS,
  type RuleEffect as Effect,
  CONDITION_OPS as OPS,
  type ConditionOp as Op,
} from "@/server/core/gate/terms";
import { ErrorNote } from "../../_components/error-note";
import { TextField } from "../../_components/text-field";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";
import {
  BUDGET_LABEL,
  type ConditionDraft,
  EMPTY_RULE,
  fromDraft,
  newCondition,
  OP_LABEL,
  type RuleDraft,
  toDraft,
} from "./rule-draft";
import { WhatIfPreview } from "./what-if";

export type RuleView = RouterOutputs["rules"]["list"][number];

/** A new rule's fields taken from the link that opened the page (e.g. a skill's allowed-tools). */
export interface RulePrefill {
  effect?: Effect;
  pattern?: string;
  description?: string;
}

export function RuleForm({
  editing,
  prefill,
  patterns,
  onDone,
  onCancel,
}: {
  editing: RuleView | null;
  prefill?: RulePrefill;
  patterns: string[];
  onDone: () => void;
  onCancel: () => void;
}) {
  const trpc = useTRPC();
  const create = useMutation(trpc.rules.create.mutationOptions({ onSuccess: onDone }));
  const update = useMutation(trpc.rules.update.mutationOptions({ onSuccess: onDone }));
  const [draft, setDraft] = useState<RuleDraft>(() =>
    editing || !prefill ? toDraft(editing) : { ...EMPTY_RULE, ...prefill },
  );
  const first = useRef<HTMLSelectElement>(null);
  useEffect(() => {
    if (editing) first.current?.focus();
  }, [editing]);
  const [formError, setFormError] = useState<Error | null>(null);
  const error = formError ?? create.error ?? update.error;
  const busy = create.isPending || update.isPending;
  const set = (change: Partial<RuleDraft>) => setDraft({ ...draft, ...change });

  function submit(e: FormEvent) {
    e.preventDefault();
    let rule: ReturnType<typeof fromDraft>;
    try {
      rule = fromDraft(draft);
    } catch (problem) {
      setFormError(problem as Error);
      return;
    }
    setFormError(null);
    if (editing) update.mutate({ id: editing.id, rule });
    else create.mutate(rule, { onSuccess: () => setDraft(EMPTY_RULE) });
  }

  return (
    <form className="stack" onSubmit={submit} aria-labelledby="rule-form-h">
      <h2 id="rule-form-h">{editing ? `Edit rule ${editing.pattern}` : "New rule"}</h2>
      <div className="form-row">
        <label>
          Effect
          <select
            ref={first}
            value={draft.effect}
            onChange={(e) => set({ effect: e.target.value as Effect })}
          >
            {EFFECTS.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        </label>
        <label>
          Capability pattern <span className="field-hint">a name or glob: weather.*, http.fetch, *</span>
          <input
            value={draft.pattern}
            onChange={(e) => set({ pattern: e.target.value })}
            list="rule-patterns"
            placeholder="weather.*"
            required
            spellCheck={false}
          />
          <datalist id="rule-patterns">
            {patterns.map((p) => (
              <option key={p} value={p} />
            ))}
          </datalist>
        </label>
      </div>
      <TextField
        label="Description"
        hint="shown in decisions: “allowed by rule …”"
        value={draft.description}
        onChange={(description) => set({ description })}
        placeholder="e.g. our status API"
        maxLength={200}
      />
      <ConditionsEditor conditions={draft.conditions} onChange={(conditions) => set({ conditions })} />
      <details>
        <summary className="small">Pin to one code version (optional)</summary>
        <TextField
          label="Version hash"
          hint="the rule then applies to that version only"
          style={{ marginTop: 6 }}
          value={draft.versionHash}
          onChange={(versionHash) => set({ versionHash })}
          spellCheck={false}
        />
      </details>
      <TrialFields draft={draft} set={set} />
      <label className="check">
        <input type="checkbox" checked={draft.enabled} onChange={(e) => set({ enabled: e.target.checked })} />
        Enabled
      </label>
      <WhatIfPreview editingId={editing?.id} draft={() => fromDraft(draft)} />
      <ErrorNote error={error} />
      <div className="row">
        <button className="btn btn-primary" type="submit" disabled={busy}>
          {editing ? "Save rule" : "Add rule"}
        </button>
        {editing && (
          <button className="btn" type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

/** Log-only, a budget, and example calls the rule must and must not match (checked on save). */
function TrialFields({ draft, set }: { draft: RuleDraft; set: (change: Partial<RuleDraft>) => void }) {
  return (
    <>
      <label className="check">
        <input type="checkbox" checked={draft.shadow} onChange={(e) => set({ shadow: e.target.checked })} />
        Log only{" "}
        <span className="field-hint">decides nothing; records each call it would decide differently</span>
      </label>
      <fieldset className="box">
        <legend>Budget (optional)</legend>
        <div className="form-row">
          <TextField
            label="Calls allowed"
            hint={`over it the rule's effect applies (${draft.effect === "allow" ? "use ask or deny" : draft.effect})`}
            value={draft.budgetLimit}
            onChange={(budgetLimit) => set({ budgetLimit })}
            inputMode="numeric"
            placeholder="e.g. 10"
          />
          <label>
            Counted
            <select
              value={draft.budgetPer}
              onChange={(e) => set({ budgetPer: e.target.value as BudgetPeriod })}
            >
              {BUDGET_PERIODS.map((p) => (
                <option key={p} value={p}>
                  {BUDGET_LABEL[p]}
                </option>
              ))}
            </select>
          </label>
        </div>
      </fieldset>
      <details open={Boolean(draft.examplesMatch || draft.examplesNoMatch)}>
        <summary className="small">Example calls (checked on every save)</summary>
        <div className="form-row" style={{ marginTop: 6 }}>
          <label>
            Must match <span className="field-hint">one a line: capability {"{json}"}</span>
            <textarea
              rows={3}
              spellCheck={false}
              value={draft.examplesMatch}
              onChange={(e) => set({ examplesMatch: e.target.value })}
              placeholder={'http.fetch {"url": "https://api.example.com/x"}'}
            />
          </label>
          <label>
            Must not match
            <textarea
              rows={3}
              spellCheck={false}
              value={draft.examplesNoMatch}
              onChange={(e) => set({ examplesNoMatch: e.target.value })}
              placeholder={'http.fetch {"url": "https://evil.example"}'}
            />
          </label>
        </div>
      </details>
    </>
  );
}

const VALUE_PLACEHOLDER: Partial<Record<Op, string>> = { matches: "^https://", startsWith: "https://api." };

/** Argument conditions, all of which must hold; none means the name alone decides. */
function ConditionsEditor({
  conditions,
  onChange,
}: {
  conditions: ConditionDraft[];
  onChange: (conditions: ConditionDraft[]) => void;
}) {
  const change = (key: number, patch: Partial<ConditionDraft>) =>
    onChange(conditions.map((c) => (c.key === key ? { ...c, ...patch } : c)));
  return (
    <fieldset className="box">
      <legend>Argument conditions (all must hold)</legend>
      <div className="conditions">
        {conditions.length === 0 && (
          <p className="muted small" style={{ margin: 0 }}>
            None: the rule matches on the name alone.
          </p>
        )}
        {conditions.map((c, i) => (
          <div className="condition" key={c.key}>
            <TextField
              label={`Argument path ${i + 1}`}
              value={c.path}
              onChange={(path) => change(c.key, { path })}
              placeholder="url or options.mode"
              required
              spellCheck={false}
            />
            <label>
              Operator {i + 1}
              <select value={c.op} onChange={(e) => change(c.key, { op: e.target.value as Op })}>
                {OPS.map((op) => (
                  <option key={op} value={op}>
                    {OP_LABEL[op]}
                  </option>
                ))}
              </select>
            </label>
            <TextField
              label={`Value ${i + 1}`}
              value={c.value}
              onChange={(value) => change(c.key, { value })}
              placeholder={VALUE_PLACEHOLDER[c.op] ?? '"text", 42 or true'}
              spellCheck={false}
            />
            <button
              type="button"
              className="btn btn-sm"
              aria-label={`Remove condition ${i + 1}`}
              onClick={() => onChange(conditions.filter((x) => x.key !== c.key))}
            >
              ✕
            </button>
          </div>
        ))}
        <div>
          <button
            type="button"
            className="btn btn-sm"
            onClick={() => onChange([...conditions, newCondition()])}
          >
            + Add condition
          </button>
        </div>
      </div>
    </fieldset>
  );
}
