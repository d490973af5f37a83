"use client";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { CopyButton } from "../../../_components/copy-button";
import { DiffView } from "../../../_components/diff-view";
import { DisclosureButton } from "../../../_components/disclosure-button";
import { ErrorNote } from "../../../_components/error-note";
import { RelativeTime } from "../../../_components/relative-time";
import { type RouterOutputs, useTRPC } from "../../../_lib/trpc";
import { codeFileOf } from "../language-badge";

type Version = RouterOutputs["toolsets"]["get"]["versions"][number];

const ORIGIN: Record<string, string> = {
  cli: "command line",
  sync: "folder sync",
  upload: "upload",
  console: "console",
};

export function VersionsList({
  name,
  versions,
  current,
}: {
  name: string;
  versions: Version[];
  current: number | null;
}) {
  // Until the user picks one, the newest version shows what it changed.
  const [picked, setOpen] = useState<number | null | undefined>(undefined);
  const open = picked === undefined ? (versions.length > 1 ? (versions[0]?.version ?? null) : null) : picked;
  const [compare, setCompare] = useState<{ from: number; to: number } | null>(null);
  const [from, setFrom] = useState(versions[versions.length - 1]?.version ?? 1);
  const [to, setTo] = useState(versions[0]?.version ?? 1);
  if (versions.length === 0) {
    return (
      <div className="card empty">
        <strong>No versions yet</strong>
        Publish the toolset to create version 1.
      </div>
    );
  }
  return (
    <div className="split">
      <section className="card" aria-labelledby="versions-h">
        <h2 id="versions-h">Versions</h2>
        <ol className="changes" reversed>
          {versions.map((v) => {
            const previous = versions.find((x) => x.version < v.version);
            return (
              <li key={v.version} data-testid={`version-${v.version}`}>
                <div className="row" style={{ justifyContent: "space-between" }}>
                  <span className="row">
                    <strong>v{v.version}</strong>
                    {v.version === current && <span className="pill pill-ok">current</span>}
                    <code title={v.contentHash}>{v.contentHash.slice(0, 12)}</code>
                    <CopyButton text={v.contentHash} label="Copy hash" />
                  </span>
                  {previous ? (
                    <DisclosureButton
                      className="btn btn-sm"
                      open={open === v.version}
                      onToggle={(show) => setOpen(show ? v.version : null)}
                    >
                      {open === v.version ? "Hide changes" : `Changes since v${previous.version}`}
                    </DisclosureButton>
                  ) : (
                    <span className="muted small">first version</span>
                  )}
                </div>
                <div className="small muted">
                  {v.bindingCount} binding{v.bindingCount === 1 ? "" : "s"} ·{" "}
                  <code>{codeFileOf(v.language)}</code> · {ORIGIN[v.origin] ?? v.origin}
                  {v.publishedBy ? ` by ${v.publishedBy}` : ""} · <RelativeTime value={v.createdAt} />
                </div>
                {open === v.version && previous && (
                  <Diff name={name} from={previous.version} to={v.version} />
                )}
              </li>
            );
          })}
        </ol>
      </section>
      <section className="card" aria-labelledby="compare-h">
        <h2 id="compare-h">Compare two versions</h2>
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            setCompare({ from, to });
          }}
        >
          <div className="row">
            <VersionSelect label="From" versions={versions} value={from} onChange={setFrom} />
            <VersionSelect label="To" versions={versions} value={to} onChange={setTo} />
            <button type="submit" className="btn" style={{ alignSelf: "flex-end" }} disabled={from === to}>
              Compare
            </button>
          </div>
        </form>
        {compare && <Diff name={name} from={compare.from} to={compare.to} />}
        {!compare && (
          <p className="muted small">Pick two versions to see bindings, doc and settings that changed.</p>
        )}
      </section>
    </div>
  );
}

function VersionSelect({
  label,
  versions,
  value,
  onChange,
}: {
  label: string;
  versions: Version[];
  value: number;
  onChange: (version: number) => void;
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(Number(e.target.value))}>
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            v{v.version}
          </option>
        ))}
      </select>
    </label>
  );
}

/** What changed between two versions: bindings, doc and settings, one line each. */
function Diff({ name, from, to }: { name: string; from: number; to: number }) {
  const trpc = useTRPC();
  const diff = useQuery(trpc.toolsets.diff.queryOptions({ name, from, to }));
  if (diff.error) return <ErrorNote error={diff.error} />;
  if (!diff.data) return <p className="muted small">Loading changes…</p>;
  return <DiffView lines={diff.data.lines} label={`Changes from v${from} to v${to}`} />;
}
