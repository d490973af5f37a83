"use client";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { BusyButton } from "../../_components/busy-button";
import { DisclosureButton } from "../../_components/disclosure-button";
import { ErrorNote } from "../../_components/error-note";
import { ListCount, SearchToolbar } from "../../_components/search-toolbar";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";
import { ToolsetCard } from "./toolset-card";
import { UploadForm } from "./upload-form";
import { useInvalidateToolsets } from "./use-invalidate-toolsets";

type SyncResult = RouterOutputs["toolsets"]["sync"];

export function ToolsetsList({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const toolsets = useQuery(trpc.toolsets.list.queryOptions());
  const [query, setQuery] = useState("");
  const [uploading, setUploading] = useState(false);
  const invalidate = useInvalidateToolsets();
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
            <DisclosureButton open={uploading} onToggle={setUploading}>
              Upload…
            </DisclosureButton>
            <BusyButton
              className="btn btn-primary"
              busy={sync.isPending}
              busyLabel="Syncing…"
              spinner
              onClick={() => sync.mutate()}
              title="Publish every folder under the toolsets directory"
            >
              Sync from folder
            </BusyButton>
          </div>
        )}
      </div>
      {uploading && (
        <section className="card" style={{ marginBottom: 12 }} aria-labelledby="upload-h">
          <UploadForm onDone={() => void invalidate()} onClose={() => setUploading(false)} />
        </section>
      )}
      <ErrorNote error={sync.error} />
      {sync.data && <SyncNote result={sync.data} />}
      <SearchToolbar label="Search toolsets" query={query} onQuery={setQuery}>
        <ListCount count={list.length} noun="toolset" />
      </SearchToolbar>
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
              <ToolsetCard toolset={t} />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** What a sync published, and the first line of each folder's failure. */
function SyncNote({ result }: { result: SyncResult }) {
  return (
    <div className="card small" role="status" style={{ marginBottom: 12 }}>
      <strong>{result.summary}</strong>
      {result.failed.map((f) => (
        <div key={f.name} className="pill-bad">
          <code>{f.name}</code>: {f.message.split("\n")[0]}
        </div>
      ))}
    </div>
  );
}
