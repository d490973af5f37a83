"use client";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { type Column, DataTable } from "../../../_components/data-table";
import { DiffView, patchLines } from "../../../_components/diff-view";
import { DisclosureButton } from "../../../_components/disclosure-button";
import { ErrorNote } from "../../../_components/error-note";
import { RelativeTime } from "../../../_components/relative-time";
import { useTRPC } from "../../../_lib/trpc";

interface VersionRow {
  version: number;
  contentHash: string;
  origin: string;
  createdAt: string;
  fileCount: number;
  current: boolean;
}

/** Every version with its hash; a diff of any version against the one before it. */
export function SkillVersions({ name, versions }: { name: string; versions: VersionRow[] }) {
  const [open, setOpen] = useState<number | null>(null);
  const columns: Column<VersionRow>[] = [
    {
      label: "Version",
      cell: (v) => (
        <>
          v{v.version} {v.current && <span className="pill">current</span>}
        </>
      ),
    },
    { label: "Hash", cell: (v) => <code title={v.contentHash}>{v.contentHash.slice(0, 12)}</code> },
    { label: "From", cell: (v) => v.origin },
    { label: "Files", cell: (v) => v.fileCount },
    { label: "When", cell: (v) => <RelativeTime value={v.createdAt} /> },
    {
      label: "Actions",
      hideLabel: true,
      cell: (v) =>
        v.version > 1 && (
          <DisclosureButton
            className="btn btn-sm"
            open={open === v.version}
            onToggle={(show) => setOpen(show ? v.version : null)}
          >
            Diff with v{v.version - 1}
          </DisclosureButton>
        ),
    },
  ];
  return (
    <div className="stack">
      <DataTable
        label="Versions"
        dense={false}
        columns={columns}
        rows={versions}
        rowKey={(v) => String(v.version)}
      />
      {open !== null && <VersionDiff name={name} from={open - 1} to={open} />}
    </div>
  );
}

function VersionDiff({ name, from, to }: { name: string; from: number; to: number }) {
  const trpc = useTRPC();
  const diff = useQuery(trpc.skills.diff.queryOptions({ name, from, to }));
  return (
    <section className="card" aria-label={`Changes from v${from} to v${to}`}>
      <ErrorNote error={diff.error} />
      {diff.data?.length === 0 && <p className="muted">No file changed.</p>}
      {diff.data?.map((d) => (
        <div key={d.path} className="stack" style={{ marginBottom: 8 }}>
          <strong>
            <code>{d.path}</code> <span className="pill">{d.change}</span>
          </strong>
          {d.patch === null ? (
            <p className="muted small">binary file</p>
          ) : (
            <DiffView lines={patchLines(d.patch)} />
          )}
        </div>
      ))}
    </section>
  );
}
