"use client";
/**
 * The Capabilities page: every module's exports with their category, filtered by a search and
 * category chips. An admin changes a category inline or settles one a new version declares.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type Dispatch, type SetStateAction, useMemo, useState } from "react";
import { CATEGORIES, type Category } from "@/server/core/capabilities/types";
import { CategoryBadge } from "../../_components/category-badge";
import { DataTable } from "../../_components/data-table";
import { EmptyState } from "../../_components/empty-state";
import { ErrorNote } from "../../_components/error-note";
import { SearchToolbar } from "../../_components/search-toolbar";
import { groupByModule } from "../../_lib/group-by-module";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";
import { CapabilityHistory, CategoryEditor, RecentChanges } from "./category-history";

type Capability = RouterOutputs["capabilities"]["list"][number];
type Only = Category | "pending" | null;

export function CapabilitiesAdmin({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const caps = useQuery(trpc.capabilities.list.queryOptions());
  const [query, setQuery] = useState("");
  const [only, setOnly] = useState<Only>(null);

  const invalidate = () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: trpc.capabilities.list.queryKey() }),
      qc.invalidateQueries({ queryKey: trpc.capabilities.history.queryKey() }),
      qc.invalidateQueries({ queryKey: trpc.capabilities.reviews.queryKey() }),
    ]);
  const decide = useMutation(trpc.capabilities.decidePending.mutationOptions({ onSuccess: invalidate }));

  const rows = caps.data ?? [];
  const filtered = useMemo(() => {
    const q = query.trim().toLowerCase();
    return rows.filter((c) => {
      if (only === "pending" ? !c.pendingCategory : only && c.category !== only) return false;
      if (!q) return true;
      return c.name.toLowerCase().includes(q) || c.description.toLowerCase().includes(q);
    });
  }, [rows, query, only]);

  return (
    <div className="split">
      <section className="card" aria-labelledby="caps-h">
        <CapabilityFilters rows={rows} query={query} setQuery={setQuery} only={only} setOnly={setOnly} />
        <ErrorNote error={caps.error ?? decide.error} />
        {caps.isPending ? (
          <p className="muted">Loading capabilities…</p>
        ) : rows.length === 0 ? (
          <EmptyState title="No capabilities yet">
            Built-in modules appear once the engine has started; toolsets appear when you publish one on the{" "}
            <a href="/toolsets">Toolsets</a> page.
          </EmptyState>
        ) : filtered.length === 0 ? (
          <EmptyState title="Nothing matches">Clear the search or the category filter.</EmptyState>
        ) : (
          <CapabilityTable
            capabilities={filtered}
            canEdit={canEdit}
            busy={decide.isPending}
            onDecide={(capability, accept) => decide.mutate({ capability, accept })}
            onChanged={invalidate}
          />
        )}
      </section>
      <RecentChanges canEdit={canEdit} />
    </div>
  );
}

/** The search box and the category chips, each with its count. */
function CapabilityFilters({
  rows,
  query,
  setQuery,
  only,
  setOnly,
}: {
  rows: Capability[];
  query: string;
  setQuery: (query: string) => void;
  only: Only;
  setOnly: Dispatch<SetStateAction<Only>>;
}) {
  const counts = useMemo(() => {
    const out: Record<string, number> = {};
    for (const c of rows) out[c.category] = (out[c.category] ?? 0) + 1;
    return out;
  }, [rows]);
  const pending = rows.filter((c) => c.pendingCategory).length;
  const chip = (value: Exclude<Only, null>, count: number) => (
    <button
      key={value}
      type="button"
      className={`chip chip-${value}`}
      aria-pressed={only === value}
      onClick={() => setOnly(only === value ? null : value)}
    >
      {value} <span className="count">{count}</span>
    </button>
  );
  return (
    <>
      <h2 id="caps-h" className="visually-hidden">
        Modules and exports
      </h2>
      <SearchToolbar label="Search capabilities" query={query} onQuery={setQuery}>
        <fieldset className="chips" aria-label="Show only a category">
          <button type="button" className="chip" aria-pressed={only === null} onClick={() => setOnly(null)}>
            All <span className="count">{rows.length}</span>
          </button>
          {CATEGORIES.map((c) => chip(c, counts[c] ?? 0))}
          {pending > 0 && chip("pending", pending)}
        </fieldset>
      </SearchToolbar>
    </>
  );
}

/** Exports grouped under their module; a row opens its category editor or history beneath it. */
function CapabilityTable({
  capabilities,
  canEdit,
  busy,
  onDecide,
  onChanged,
}: {
  capabilities: Capability[];
  canEdit: boolean;
  busy: boolean;
  onDecide: (capability: string, accept: boolean) => void;
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState<string | null>(null);
  const [openHistory, setOpenHistory] = useState<string | null>(null);
  const groups = useMemo(
    () =>
      groupByModule(capabilities).map(([module, exports]) => ({
        key: module,
        heading: (
          <>
            <code>toolstore/{module}</code> <span className="pill">{exports[0]?.source ?? ""}</span>
          </>
        ),
        rows: exports,
      })),
    [capabilities],
  );
  return (
    <DataTable
      groups={groups}
      rowKey={(c) => c.id}
      rowProps={(c) => ({ "data-testid": `cap-${c.name}` })}
      columns={[
        { label: "Export", className: "nowrap", cell: (c) => <code>{c.name}</code> },
        {
          label: "Description",
          className: "desc",
          cell: (c) => (
            <span className="clamp-2" title={c.description}>
              {c.description || "—"}
            </span>
          ),
        },
        {
          label: "Category",
          cell: (c) => <CategoryCell capability={c} canEdit={canEdit} busy={busy} onDecide={onDecide} />,
        },
        {
          label: "Actions",
          hideLabel: true,
          className: "actions",
          cell: (c) => (
            <>
              <button
                type="button"
                className="btn btn-sm"
                aria-expanded={openHistory === c.name}
                aria-label={`History of ${c.name}`}
                onClick={() => setOpenHistory(openHistory === c.name ? null : c.name)}
              >
                History
              </button>
              {canEdit && (
                <button
                  type="button"
                  className="btn btn-sm"
                  aria-expanded={editing === c.name}
                  aria-label={`Change category of ${c.name}`}
                  onClick={() => setEditing(editing === c.name ? null : c.name)}
                >
                  Change…
                </button>
              )}
            </>
          ),
        },
      ]}
      detail={(c) =>
        editing === c.name || openHistory === c.name ? (
          <>
            {editing === c.name && (
              <CategoryEditor
                capability={c.name}
                current={c.category as Category}
                onDone={() => {
                  setEditing(null);
                  setOpenHistory(c.name);
                  onChanged();
                }}
                onCancel={() => setEditing(null)}
              />
            )}
            {openHistory === c.name && <CapabilityHistory capability={c.name} />}
          </>
        ) : null
      }
    />
  );
}

/** The category in force; a category a new version declares waits here for an admin. */
function CategoryCell({
  capability: c,
  canEdit,
  busy,
  onDecide,
}: {
  capability: Capability;
  canEdit: boolean;
  busy: boolean;
  onDecide: (capability: string, accept: boolean) => void;
}) {
  const choices = [
    { accept: true, label: `Accept ${c.pendingCategory}` },
    { accept: false, label: `Keep ${c.category}` },
  ];
  return (
    <>
      <div className="row">
        <CategoryBadge category={c.category} />
        {c.declaredCategory !== c.category && !c.pendingCategory && (
          <span className="field-hint" title="The code declares another category">
            code says {c.declaredCategory}
          </span>
        )}
      </div>
      {c.pendingCategory && (
        <div className="pending-note">
          new version declares <CategoryBadge category={c.pendingCategory} />
          {canEdit && (
            <span className="row">
              {choices.map(({ accept, label }) => (
                <button
                  key={label}
                  type="button"
                  className="btn btn-sm"
                  disabled={busy}
                  onClick={() => onDecide(c.name, accept)}
                >
                  {label}
                </button>
              ))}
            </span>
          )}
        </div>
      )}
    </>
  );
}
