"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useMemo, useRef, useState } from "react";
import { CategoryBadge } from "../../_components/category-badge";
import { ErrorNote } from "../../_components/error-note";
import { RelativeTime } from "../../_components/relative-time";
import { useSlashToFocus } from "../../_components/use-slash-to-focus";
import { useTRPC } from "../../_lib/trpc";
import { InlineCode } from "./inline-code";
import { codeFileOf, LanguageBadge } from "./language-badge";
import { UploadForm } from "./upload-form";

export function ToolsetsList({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const toolsets = useQuery(trpc.toolsets.list.queryOptions());
  const [query, setQuery] = useState("");
  const [uploading, setUploading] = useState(false);
  const search = useRef<HTMLInputElement>(null);
  useSlashToFocus(search);
  const invalidate = () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: trpc.toolsets.pathKey() }),
      qc.invalidateQueries({ queryKey: trpc.capabilities.pathKey() }),
    ]);
  const sync = useMutation(trpc.toolsets.sync.mutationOptions({ onSuccess: invalidate }));

  const list = toolsets.data ?? [];
  const filtered = useMemo(() => {
    const q = query.trim().toLowerCase();
    if (!q) return list;
    return list.filter((t) => t.name.includes(q) || t.description.toLowerCase().includes(q));
  }, [list, query]);

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Toolsets</h1>
          <p>
            A toolset is a folder with <code>doc.md</code> and <code>toolset.ts</code> or{" "}
            <code>toolset.py</code>; agents import it as <code>toolstore/&lt;name&gt;</code>.
          </p>
        </div>
        {canEdit && (
          <div className="row">
            <button
              type="button"
              className="btn"
              aria-expanded={uploading}
              onClick={() => setUploading(!uploading)}
            >
              Upload…
            </button>
            <button
              type="button"
              className="btn btn-primary"
              disabled={sync.isPending}
              onClick={() => sync.mutate()}
              title="Publish every folder under the toolsets directory"
            >
              {sync.isPending ? (
                <>
                  <span className="spinner" aria-hidden /> Syncing…
                </>
              ) : (
                "Sync from folder"
              )}
            </button>
          </div>
        )}
      </div>
      {uploading && (
        <section className="card" style={{ marginBottom: 12 }} aria-labelledby="upload-h">
          <UploadForm onDone={() => void invalidate()} onClose={() => setUploading(false)} />
        </section>
      )}
      <ErrorNote error={sync.error} />
      {sync.data && (
        <div className="card small" role="status" style={{ marginBottom: 12 }}>
          <strong>{sync.data.summary}</strong>
          {sync.data.failed.map((f) => (
            <div key={f.name} className="pill-bad">
              <code>{f.name}</code>: {f.message.split("\n")[0]}
            </div>
          ))}
        </div>
      )}
      <div className="toolbar">
        <label className="search">
          <span className="visually-hidden">Search toolsets</span>
          <input
            ref={search}
            type="search"
            placeholder="Search toolsets"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
          />
          <kbd aria-hidden>/</kbd>
        </label>
        <span className="muted small">
          {list.length} toolset{list.length === 1 ? "" : "s"}
        </span>
      </div>
      <ErrorNote error={toolsets.error} />
      {toolsets.isPending ? (
        <p className="muted">Loading toolsets…</p>
      ) : list.length === 0 ? (
        <div className="card empty">
          <strong>No toolsets yet</strong>
          Run <code>npm run toolstore -- publish-toolset toolsets/calculator</code>
          {canEdit ? " or press Sync from folder." : ", or ask an admin to press Sync."}
        </div>
      ) : filtered.length === 0 ? (
        <div className="card empty">
          <strong>No toolset matches “{query}”</strong>
          Clear the search to see all {list.length}.
        </div>
      ) : (
        <ul className="toolset-list" aria-label="Toolsets">
          {filtered.map((t) => (
            <li key={t.name}>
              <Link href={`/toolsets/${t.name}`} className="card toolset-card">
                <span className="title">
                  <strong>{t.name}</strong>
                  <span className="pill">{t.version ? `v${t.version}` : "no version"}</span>
                  <LanguageBadge language={t.language} />
                </span>
                <p>
                  {t.description ? (
                    <InlineCode text={t.description} />
                  ) : (
                    `No description in ${codeFileOf(t.language)}.`
                  )}
                </p>
                <span className="row small">
                  <span className="muted">
                    {t.bindingCount} binding{t.bindingCount === 1 ? "" : "s"}
                  </span>
                  {t.categories.map((c) => (
                    <CategoryBadge key={c} category={c} />
                  ))}
                </span>
                <span className="row small muted">
                  updated <RelativeTime value={t.updatedAt} />
                  {t.missingEnv.length > 0 && (
                    <span className="pill" title="Declared variables without a value">
                      not set: {t.missingEnv.join(", ")}
                    </span>
                  )}
                  {t.pendingCategoryChanges > 0 && (
                    <span className="pill pill-wait">
                      {t.pendingCategoryChanges} category change{t.pendingCategoryChanges === 1 ? "" : "s"} to
                      review
                    </span>
                  )}
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
