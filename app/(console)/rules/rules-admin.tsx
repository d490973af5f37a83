"use client";
/**
 * The Rules card: the rules in force, each switched on or off in place, and (for an admin) the
 * form below that adds one or edits the one picked.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { DataTable } from "../../_components/data-table";
import { EmptyState } from "../../_components/empty-state";
import { ErrorNote } from "../../_components/error-note";
import { RelativeTime } from "../../_components/relative-time";
import { useTRPC } from "../../_lib/trpc";
import { BUDGET_LABEL, OP_LABEL } from "./rule-draft";
import { RuleForm, type RulePrefill, type RuleView } from "./rule-form";

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
          <EmptyState title="No rules yet">
            {canEdit
              ? "Add one below, e.g. allow http.fetch where url starts with https://api.example.com/."
              : "Without rules, the mode and the category decide every call."}
          </EmptyState>
        ) : (
          <RulesTable
            rules={list}
            canEdit={canEdit}
            enabled={(r) => flipped[r.id] ?? r.enabled}
            onToggle={(r, on) => {
              setFlipped({ ...flipped, [r.id]: on });
              setEnabled.mutate({ id: r.id, enabled: on });
            }}
            onEdit={(r) => {
              setEditing(r);
              formRef.current?.scrollIntoView({ block: "nearest" });
            }}
            onDelete={(r) => remove.mutate({ id: r.id })}
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

function RulesTable({
  rules,
  canEdit,
  enabled,
  onToggle,
  onEdit,
  onDelete,
}: {
  rules: RuleView[];
  canEdit: boolean;
  /** Whether the switch shows on: the flip the user just made, or the stored state. */
  enabled: (rule: RuleView) => boolean;
  onToggle: (rule: RuleView, on: boolean) => void;
  onEdit: (rule: RuleView) => void;
  onDelete: (rule: RuleView) => void;
}) {
  const [confirmDelete, setConfirmDelete] = useState<string | null>(null);
  return (
    <DataTable
      rows={rules}
      rowKey={(r) => r.id}
      rowProps={(r) => ({ className: enabled(r) ? undefined : "rule-off", "data-testid": "rule-row" })}
      columns={[
        {
          label: "Effect",
          cell: (r) => (
            <>
              <span className={`effect effect-${r.effect}`}>{r.effect}</span>
              {r.shadow && (
                <div className="small muted" data-testid="rule-shadow">
                  log-only · {r.shadowHits} call{r.shadowHits === 1 ? "" : "s"} it would have decided
                  differently
                </div>
              )}
            </>
          ),
        },
        {
          label: "Capability",
          cell: (r) => (
            <>
              <code>{r.pattern}</code>
              {r.description && <div className="small muted">{r.description}</div>}
              {r.budget && (
                <div className="small muted">
                  budget: {r.budget.limit} call{r.budget.limit === 1 ? "" : "s"} {BUDGET_LABEL[r.budget.per]}
                </div>
              )}
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
                      <code>{c.path}</code> {OP_LABEL[c.op] ?? c.op} <code>{JSON.stringify(c.value)}</code>
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
            <input
              type="checkbox"
              aria-label={`Rule ${r.pattern} enabled`}
              checked={enabled(r)}
              disabled={!canEdit}
              onChange={(e) => onToggle(r, e.target.checked)}
            />
          ),
        },
        {
          label: "Actions",
          hideLabel: true,
          className: "actions",
          cell: (r) =>
            canEdit && (
              <>
                <button
                  type="button"
                  className="btn btn-sm"
                  aria-label={`Edit rule ${r.pattern}`}
                  onClick={() => onEdit(r)}
                >
                  Edit
                </button>
                {confirmDelete === r.id ? (
                  <button
                    type="button"
                    className="btn btn-sm btn-danger"
                    autoFocus
                    onBlur={() => setConfirmDelete(null)}
                    onClick={() => onDelete(r)}
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
            ),
        },
      ]}
    />
  );
}
