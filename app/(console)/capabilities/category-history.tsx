"use client";
/**
 * A capability's category over time: the inline editor that changes it (with a reason), its own
 * history under its row, and the page's list of recent changes.
 */
import { useMutation, useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { CATEGORIES, type Category } from "@/server/core/capabilities/types";
import { CategoryBadge } from "../../_components/category-badge";
import { EmptyState } from "../../_components/empty-state";
import { ErrorNote } from "../../_components/error-note";
import { RelativeTime } from "../../_components/relative-time";
import { TextField } from "../../_components/text-field";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";

type ChangeRow = RouterOutputs["capabilities"]["history"][number];

const RECENT = 8;

export function CategoryEditor({
  capability,
  current,
  onDone,
  onCancel,
}: {
  capability: string;
  current: Category;
  onDone: () => void;
  onCancel: () => void;
}) {
  const trpc = useTRPC();
  const change = useMutation(trpc.capabilities.changeCategory.mutationOptions({ onSuccess: onDone }));
  const [category, setCategory] = useState<Category>(current);
  const [reason, setReason] = useState("");
  function submit(e: FormEvent) {
    e.preventDefault();
    change.mutate({ capability, category, reason });
  }
  return (
    <form
      className="inline-form"
      onSubmit={submit}
      onKeyDown={(e) => {
        if (e.key === "Escape") onCancel();
      }}
      aria-label={`Change the category of ${capability}`}
    >
      <label>
        New category
        <select value={category} onChange={(e) => setCategory(e.target.value as Category)} autoFocus>
          {CATEGORIES.map((c) => (
            <option key={c} value={c}>
              {c}
              {c === current ? " (current)" : ""}
            </option>
          ))}
        </select>
      </label>
      <TextField
        className="grow"
        label="Reason"
        hint="kept in the history"
        value={reason}
        onChange={setReason}
        placeholder="e.g. it only reads from a local mirror"
        required
        minLength={3}
      />
      <div className="row">
        <button className="btn btn-primary" type="submit" disabled={change.isPending || category === current}>
          Save category
        </button>
        <button className="btn" type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <ErrorNote error={change.error} />
    </form>
  );
}

export function CapabilityHistory({ capability }: { capability: string }) {
  const trpc = useTRPC();
  const history = useQuery(trpc.capabilities.history.queryOptions({ capability }));
  if (history.error) return <ErrorNote error={history.error} />;
  if (!history.data) return <p className="muted">Loading history…</p>;
  if (history.data.length === 0)
    return (
      <p className="muted" style={{ margin: 0 }}>
        No category changes for <code>{capability}</code>: it uses the category its code declares.
      </p>
    );
  return (
    <section aria-label={`History of ${capability}`}>
      <ChangeList changes={history.data} />
    </section>
  );
}

/** The aside: the newest changes of every capability, the rest behind a button. */
export function RecentChanges({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const history = useQuery(trpc.capabilities.history.queryOptions({ take: 100 }));
  const [all, setAll] = useState(false);
  const changes = history.data ?? [];
  return (
    <aside className="card" aria-labelledby="changes-h">
      <h2 id="changes-h">Recent category changes</h2>
      <ErrorNote error={history.error} />
      {history.data?.length === 0 ? (
        <EmptyState title="No changes yet">
          {canEdit
            ? "Press Change… on a capability to set its category; the reason is kept here."
            : "An admin's category changes appear here with who, when and why."}
        </EmptyState>
      ) : (
        <>
          <ChangeList changes={changes.slice(0, all ? undefined : RECENT)} showCapability />
          {changes.length > RECENT && (
            <button type="button" className="btn btn-sm" onClick={() => setAll(!all)}>
              {all ? "Show fewer" : `Show all ${changes.length}`}
            </button>
          )}
        </>
      )}
    </aside>
  );
}

function ChangeList({ changes, showCapability }: { changes: ChangeRow[]; showCapability?: boolean }) {
  return (
    <ol className="changes">
      {changes.map((c) => (
        <li key={c.id} data-testid="category-change">
          {showCapability && (
            <div>
              <code>{c.capability}</code>
            </div>
          )}
          <div className="row">
            <CategoryBadge category={c.fromCategory} />
            <span aria-hidden>→</span>
            <span className="visually-hidden">to</span>
            <CategoryBadge category={c.toCategory} />
            {c.fromCategory === c.toCategory && <span className="field-hint">kept</span>}
          </div>
          <div className="muted small">
            {c.changedBy ?? "system"} · <RelativeTime value={c.createdAt} />
          </div>
          <div className="reason">{c.reason}</div>
        </li>
      ))}
    </ol>
  );
}
