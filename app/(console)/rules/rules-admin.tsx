"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useRef, useState } from "react";
import type { JsonValue as Json } from "@/server/core/capabilities/types";
import {
  RULE_EFFECTS as EFFECTS,
  type RuleEffect as Effect,
  CONDITION_OPS as OPS,
  type ConditionOp as Op,
} from "@/server/core/gate/terms";
import { DataTable } from "../../_components/data-table";
import { ErrorNote } from "../../_components/error-note";
import { RelativeTime } from "../../_components/relative-time";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";

const OP_LABEL: Record<Op, string> = {
  eq: "equals",
  neq: "does not equal",
  startsWith: "starts with",
  contains: "contains",
  matches: "matches regex",
};

interface ConditionDraft {
  key: number;
  path: string;
  op: Op;
  value: string;
}
interface RuleDraft {
  effect: Effect;
  pattern: string;
  description: string;
  enabled: boolean;
  versionHash: string;
  conditions: ConditionDraft[];
}
type RuleView = RouterOutputs["rules"]["list"][number];

const EMPTY: RuleDraft = {
  effect: "ask",
  pattern: "",
  description: "",
  enabled: true,
  versionHash: "",
  conditions: [],
};
let nextKey = 1;

/** eq/neq/contains take any JSON value (42, true, "x"); plain text is a string. */
function parseValue(op: Op, text: string): Json {
  if (op === "startsWith" || op === "matches") return text;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

function showValue(op: Op, value: Json): string {
  if (op === "startsWith" || op === "matches") return String(value);
  return typeof value === "string" && !/^(true|false|null|-?\d.*|\[.*|\{.*|".*)$/.test(value)
    ? value
    : JSON.stringify(value);
}

/** A new rule's fields taken from the link that opened the page (e.g. a skill's allowed-tools). */
export interface RulePrefill {
  effect?: RuleDraft["effect"];
  pattern?: string;
  description?: string;
}

export function RulesAdmin({ canEdit, prefill }: { canEdit: boolean; prefill?: RulePrefill }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const rules = useQuery(trpc.rules.list.queryOptions());
  const caps = useQuery(trpc.capabilities.list.queryOptions());
  const invalidate = () => qc.invalidateQueries({ queryKey: trpc.rules.pathKey() });
  // The switch flips at once; the server's answer (or its error) settles it.
  const [flipped, setFlipped] = useState<Record<string, boolean>>({});
  const setEnabled = useMutation(
    trpc.rules.setEnabled.mutationOptions({
      onSettled: async (_data, _error, { id }) => {
        await invalidate();
        setFlipped(({ [id]: _, ...rest }) => rest);
      },
    }),
  );
  const remove = useMutation(trpc.rules.delete.mutationOptions({ onSuccess: invalidate }));
  const [editing, setEditing] = useState<RuleView | null>(null);
  const [confirmDelete, setConfirmDelete] = useState<string | null>(null);
  const formRef = useRef<HTMLElement>(null);

  const list = (rules.data ?? []) as RuleView[];
  const patterns = [...new Set((caps.data ?? []).flatMap((c) => [`${c.module}.*`, c.name]))];

  return (
    <div className="stack">
      <section className="card" aria-labelledby="rules-h">
        <h2 id="rules-h">Rules</h2>
        <ErrorNote error={rules.error ?? setEnabled.error ?? remove.error} />
        {rules.isPending ? (
          <p className="muted">Loading rules…</p>
        ) : list.length === 0 ? (
          <div className="empty">
            <strong>No rules yet</strong>
            {canEdit
              ? "Add one below, e.g. allow http.fetch where url starts with https://api.example.com/."
              : "Without rules, the mode and the category decide every call."}
          </div>
        ) : (
          <DataTable
            rows={list}
            rowKey={(r) => r.id}
            rowProps={(r) => ({
              className: (flipped[r.id] ?? r.enabled) ? undefined : "rule-off",
              "data-testid": "rule-row",
            })}
            columns={[
              {
                label: "Effect",
                cell: (r) => (
                  <>
                    <span className={`effect effect-${r.effect}`}>{r.effect}</span>
                  </>
                ),
              },
              {
                label: "Capability",
                cell: (r) => (
                  <>
                    <code>{r.pattern}</code>
                    {r.description && <div className="small muted">{r.description}</div>}
                    {r.versionHash && (
                      <div className="small muted" title={r.versionHash}>
                        only version {r.versionHash.slice(0, 10)}
                      </div>
                    )}
                  </>
                ),
              },
              {
                label: "When",
                cell: (r) => (
                  <>
                    {r.conditions.length === 0 ? (
                      <span className="muted">any arguments</span>
                    ) : (
                      <ul className="param-list">
                        {r.conditions.map((c) => (
                          <li key={`${c.path}-${c.op}-${JSON.stringify(c.value)}`}>
                            <code>{c.path}</code> {OP_LABEL[c.op] ?? c.op}{" "}
                            <code>{JSON.stringify(c.value)}</code>
                          </li>
                        ))}
                      </ul>
                    )}
                    <div className="small muted">
                      {r.createdBy ?? "—"} · <RelativeTime value={r.updatedAt} />
                    </div>
                  </>
                ),
              },
              {
                label: "On",
                cell: (r) => (
                  <>
                    <input
                      type="checkbox"
                      aria-label={`Rule ${r.pattern} enabled`}
                      checked={flipped[r.id] ?? r.enabled}
                      disabled={!canEdit}
                      onChange={(e) => {
                        setFlipped({ ...flipped, [r.id]: e.target.checked });
                        setEnabled.mutate({ id: r.id, enabled: e.target.checked });
                      }}
                    />
                  </>
                ),
              },
              {
                label: "Actions",
                hideLabel: true,
                className: "actions",
                cell: (r) => (
                  <>
                    {canEdit && (
                      <>
                        <button
                          type="button"
                          className="btn btn-sm"
                          aria-label={`Edit rule ${r.pattern}`}
                          onClick={() => {
                            setEditing(r);
                            formRef.current?.scrollIntoView({ block: "nearest" });
                          }}
                        >
                          Edit
                        </button>
                        {confirmDelete === r.id ? (
                          <button
                            type="button"
                            className="btn btn-sm btn-danger"
                            autoFocus
                            onBlur={() => setConfirmDelete(null)}
                            onClick={() => remove.mutate({ id: r.id })}
                          >
                            Confirm delete
                          </button>
                        ) : (
                          <button
                            type="button"
                            className="btn btn-sm btn-danger"
                            aria-label={`Delete rule ${r.pattern}`}
                            onClick={() => setConfirmDelete(r.id)}
                          >
                            Delete
                          </button>
                        )}
                      </>
                    )}
                  </>
                ),
              },
            ]}
          />
        )}
      </section>
      {canEdit && (
        <section className="card" aria-labelledby="rule-form-h" ref={formRef}>
          <RuleForm
            key={editing?.id ?? "new"}
            editing={editing}
            prefill={prefill}
            patterns={patterns}
            onDone={() => {
              setEditing(null);
              void invalidate();
            }}
            onCancel={() => setEditing(null)}
          />
        </section>
      )}
    </div>
  );
}

function toDraft(rule: RuleView | null): RuleDraft {
  if (!rule) return EMPTY;
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

function RuleForm({
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
    editing || !prefill ? toDraft(editing) : { ...EMPTY, ...prefill },
  );
  const first = useRef<HTMLSelectElement>(null);
  useEffect(() => {
    if (editing) first.current?.focus();
  }, [editing]);
  const error = create.error ?? update.error;
  const busy = create.isPending || update.isPending;

  function setCondition(key: number, change: Partial<ConditionDraft>) {
    setDraft({
      ...draft,
      conditions: draft.conditions.map((c) => (c.key === key ? { ...c, ...change } : c)),
    });
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const rule = {
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
    if (editing) update.mutate({ id: editing.id, rule });
    else create.mutate(rule, { onSuccess: () => setDraft(EMPTY) });
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
            onChange={(e) => setDraft({ ...draft, effect: e.target.value as Effect })}
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
            onChange={(e) => setDraft({ ...draft, pattern: e.target.value })}
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
      <label>
        Description <span className="field-hint">shown in decisions: “allowed by rule …”</span>
        <input
          value={draft.description}
          onChange={(e) => setDraft({ ...draft, description: e.target.value })}
          placeholder="e.g. our status API"
          maxLength={200}
        />
      </label>
      <fieldset className="box">
        <legend>Argument conditions (all must hold)</legend>
        <div className="conditions">
          {draft.conditions.length === 0 && (
            <p className="muted small" style={{ margin: 0 }}>
              None: the rule matches on the name alone.
            </p>
          )}
          {draft.conditions.map((c, i) => (
            <div className="condition" key={c.key}>
              <label>
                Argument path {i + 1}
                <input
                  value={c.path}
                  onChange={(e) => setCondition(c.key, { path: e.target.value })}
                  placeholder="url or options.mode"
                  required
                  spellCheck={false}
                />
              </label>
              <label>
                Operator {i + 1}
                <select value={c.op} onChange={(e) => setCondition(c.key, { op: e.target.value as Op })}>
                  {OPS.map((op) => (
                    <option key={op} value={op}>
                      {OP_LABEL[op]}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Value {i + 1}
                <input
                  value={c.value}
                  onChange={(e) => setCondition(c.key, { value: e.target.value })}
                  placeholder={
                    c.op === "matches"
                      ? "^https://"
                      : c.op === "startsWith"
                        ? "https://api."
                        : '"text", 42 or true'
                  }
                  spellCheck={false}
                />
              </label>
              <button
                type="button"
                className="btn btn-sm"
                aria-label={`Remove condition ${i + 1}`}
                onClick={() =>
                  setDraft({ ...draft, conditions: draft.conditions.filter((x) => x.key !== c.key) })
                }
              >
                ✕
              </button>
            </div>
          ))}
          <div>
            <button
              type="button"
              className="btn btn-sm"
              onClick={() =>
                setDraft({
                  ...draft,
                  conditions: [
                    ...draft.conditions,
                    { key: nextKey++, path: "", op: "startsWith", value: "" },
                  ],
                })
              }
            >
              + Add condition
            </button>
          </div>
        </div>
      </fieldset>
      <details>
        <summary className="small">Pin to one code version (optional)</summary>
        <label style={{ marginTop: 6 }}>
          Version hash <span className="field-hint">the rule then applies to that version only</span>
          <input
            value={draft.versionHash}
            onChange={(e) => setDraft({ ...draft, versionHash: e.target.value })}
            spellCheck={false}
          />
        </label>
      </details>
      <label className="check">
        <input
          type="checkbox"
          checked={draft.enabled}
          onChange={(e) => setDraft({ ...draft, enabled: e.target.checked })}
        />
        Enabled
      </label>
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
