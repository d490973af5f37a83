"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, Fragment, useMemo, useRef, useState } from "react";
import { CATEGORIES, type Category } from "@/server/core/capabilities/types";
import { CategoryBadge } from "../../_components/category-badge";
import { ErrorNote } from "../../_components/error-note";
import { RelativeTime } from "../../_components/relative-time";
import { useSlashToFocus } from "../../_components/use-slash-to-focus";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";

export function CapabilitiesAdmin({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const caps = useQuery(trpc.capabilities.list.queryOptions());
  const history = useQuery(trpc.capabilities.history.queryOptions({ take: 100 }));
  const [query, setQuery] = useState("");
  const [only, setOnly] = useState<Category | "pending" | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [openHistory, setOpenHistory] = useState<string | null>(null);
  const [allChanges, setAllChanges] = useState(false);
  const search = useRef<HTMLInputElement>(null);
  useSlashToFocus(search);

  const invalidate = () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: trpc.capabilities.list.queryKey() }),
      qc.invalidateQueries({ queryKey: trpc.capabilities.history.queryKey() }),
    ]);
  const decide = useMutation(trpc.capabilities.decidePending.mutationOptions({ onSuccess: invalidate }));

  const rows = caps.data ?? [];
  const pending = rows.filter((c) => c.pendingCategory);
  const filtered = useMemo(() => {
    const q = query.trim().toLowerCase();
    return rows.filter((c) => {
      if (only === "pending" ? !c.pendingCategory : only && c.category !== only) return false;
      if (!q) return true;
      return c.name.toLowerCase().includes(q) || c.description.toLowerCase().includes(q);
    });
  }, [rows, query, only]);
  const modules = useMemo(() => {
    const map = new Map<string, typeof filtered>();
    for (const c of filtered) map.set(c.module, [...(map.get(c.module) ?? []), c]);
    return [...map.entries()];
  }, [filtered]);
  const counts = useMemo(() => {
    const out: Record<string, number> = {};
    for (const c of rows) out[c.category] = (out[c.category] ?? 0) + 1;
    return out;
  }, [rows]);

  return (
    <div className="split">
      <section className="card" aria-labelledby="caps-h">
        <div className="toolbar">
          <h2 id="caps-h" className="visually-hidden">
            Modules and exports
          </h2>
          <label className="search">
            <span className="visually-hidden">Search capabilities</span>
            <input
              ref={search}
              type="search"
              placeholder="Search capabilities"
              value={query}
              onChange={(e) => setQuery(e.target.value)}
            />
            <kbd aria-hidden>/</kbd>
          </label>
          <fieldset className="chips" aria-label="Show only a category">
            <button type="button" className="chip" aria-pressed={only === null} onClick={() => setOnly(null)}>
              All <span className="count">{rows.length}</span>
            </button>
            {CATEGORIES.map((c) => (
              <button
                key={c}
                type="button"
                className={`chip chip-${c}`}
                aria-pressed={only === c}
                onClick={() => setOnly(only === c ? null : c)}
              >
                {c} <span className="count">{counts[c] ?? 0}</span>
              </button>
            ))}
            {pending.length > 0 && (
              <button
                type="button"
                className="chip chip-pending"
                aria-pressed={only === "pending"}
                onClick={() => setOnly(only === "pending" ? null : "pending")}
              >
                pending <span className="count">{pending.length}</span>
              </button>
            )}
          </fieldset>
        </div>
        <ErrorNote error={caps.error ?? decide.error} />
        {caps.isPending ? (
          <p className="muted">Loading capabilities…</p>
        ) : rows.length === 0 ? (
          <div className="empty">
            <strong>No capabilities yet</strong>
            Built-in modules appear once the engine has started; toolsets appear when you publish one on the{" "}
            <a href="/toolsets">Toolsets</a> page.
          </div>
        ) : filtered.length === 0 ? (
          <div className="empty">
            <strong>Nothing matches</strong>
            Clear the search or the category filter.
          </div>
        ) : (
          <div className="table-wrap">
            <table className="dense">
              <thead>
                <tr>
                  <th scope="col">Export</th>
                  <th scope="col">Description</th>
                  <th scope="col">Category</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {modules.map(([module, exports]) => (
                  <Fragment key={module}>
                    <tr className="group-row">
                      <th scope="rowgroup" colSpan={4}>
                        <code>toolstore/{module}</code>{" "}
                        <span className="pill">{exports[0]?.source ?? ""}</span>
                      </th>
                    </tr>
                    {exports.map((c) => (
                      <Fragment key={c.id}>
                        <tr data-testid={`cap-${c.name}`}>
                          <td className="nowrap">
                            <code>{c.name}</code>
                          </td>
                          <td className="desc" title={c.description}>
                            <span className="clamp-2">{c.description || "—"}</span>
                          </td>
                          <td>
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
                                    <button
                                      type="button"
                                      className="btn btn-sm"
                                      disabled={decide.isPending}
                                      onClick={() => decide.mutate({ capability: c.name, accept: true })}
                                    >
                                      Accept {c.pendingCategory}
                                    </button>
                                    <button
                                      type="button"
                                      className="btn btn-sm"
                                      disabled={decide.isPending}
                                      onClick={() => decide.mutate({ capability: c.name, accept: false })}
                                    >
                                      Keep {c.category}
                                    </button>
                                  </span>
                                )}
                              </div>
                            )}
                          </td>
                          <td className="actions">
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
                          </td>
                        </tr>
                        {editing === c.name && (
                          <tr className="inline-row">
                            <td colSpan={4}>
                              <CategoryEditor
                                capability={c.name}
                                current={c.category as Category}
                                onDone={() => {
                                  setEditing(null);
                                  setOpenHistory(c.name);
                                  void invalidate();
                                }}
                                onCancel={() => setEditing(null)}
                              />
                            </td>
                          </tr>
                        )}
                        {openHistory === c.name && (
                          <tr className="inline-row">
                            <td colSpan={4}>
                              <CapabilityHistory capability={c.name} />
                            </td>
                          </tr>
                        )}
                      </Fragment>
                    ))}
                  </Fragment>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <aside className="card" aria-labelledby="changes-h">
        <h2 id="changes-h">Recent category changes</h2>
        <ErrorNote error={history.error} />
        {history.data?.length === 0 ? (
          <div className="empty">
            <strong>No changes yet</strong>
            {canEdit
              ? "Press Change… on a capability to set its category; the reason is kept here."
              : "An admin's category changes appear here with who, when and why."}
          </div>
        ) : (
          <>
            <ChangeList changes={(history.data ?? []).slice(0, allChanges ? undefined : 8)} showCapability />
            {(history.data?.length ?? 0) > 8 && (
              <button type="button" className="btn btn-sm" onClick={() => setAllChanges(!allChanges)}>
                {allChanges ? "Show fewer" : `Show all ${history.data?.length}`}
              </button>
            )}
          </>
        )}
      </aside>
    </div>
  );
}

function CategoryEditor({
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
      <label className="grow">
        Reason <span className="field-hint">kept in the history</span>
        <input
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          placeholder="e.g. it only reads from a local mirror"
          required
          minLength={3}
        />
      </label>
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

function CapabilityHistory({ capability }: { capability: string }) {
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

type ChangeRow = RouterOutputs["capabilities"]["history"][number];

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
