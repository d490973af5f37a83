"use client";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
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
  return (
    <div className="stack">
      <div className="skill-table-wrap">
        <table className="table">
          <thead>
            <tr>
              <th>Version</th>
              <th>Hash</th>
              <th>From</th>
              <th>Files</th>
              <th>When</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {versions.map((v) => (
              <tr key={v.version}>
                <td>
                  v{v.version} {v.current && <span className="pill">current</span>}
                </td>
                <td>
                  <code title={v.contentHash}>{v.contentHash.slice(0, 12)}</code>
                </td>
                <td>{v.origin}</td>
                <td>{v.fileCount}</td>
                <td>
                  <RelativeTime value={v.createdAt} />
                </td>
                <td>
                  {v.version > 1 && (
                    <button
                      type="button"
                      className="btn btn-sm"
                      aria-expanded={open === v.version}
                      onClick={() => setOpen(open === v.version ? null : v.version)}
                    >
                      Diff with v{v.version - 1}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
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
            <pre className="skill-viewer">
              {d.patch
                .split("\n")
                .slice(4)
                .map((line, i) => (
                  <div
                    // biome-ignore lint/suspicious/noArrayIndexKey: lines of one patch, in order
                    key={i}
                    className={`diff-line ${line.startsWith("+") ? "diff-add" : line.startsWith("-") ? "diff-del" : ""}`}
                  >
                    {line || " "}
                  </div>
                ))}
            </pre>
          )}
        </div>
      ))}
    </section>
  );
}
