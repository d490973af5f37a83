"use client";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorNote } from "../../../_components/error-note";
import { MarkdownView } from "../../../_components/markdown-view";
import { useTRPC } from "../../../_lib/trpc";

interface FileEntry {
  path: string;
  size: number;
  mime: string;
  text: boolean;
}

const size = (n: number) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`);

/** The file tree of one version, and a viewer for the selected file (text only; markdown rendered). */
export function SkillFiles({ name, version, files }: { name: string; version: number; files: FileEntry[] }) {
  const trpc = useTRPC();
  const [selected, setSelected] = useState(files.find((f) => f.path !== "SKILL.md")?.path ?? "SKILL.md");
  const [rendered, setRendered] = useState(true);
  const entry = files.find((f) => f.path === selected);
  const file = useQuery({
    ...trpc.skills.file.queryOptions({ name, path: selected, version }),
    enabled: !!entry?.text,
  });
  const isMarkdown = entry?.mime === "text/markdown";

  return (
    <div className="skill-files">
      <ul className="skill-tree" aria-label="Files">
        {files.map((f) => (
          <li key={f.path}>
            <button type="button" aria-current={f.path === selected} onClick={() => setSelected(f.path)}>
              <span>{f.path}</span>
              <span className="muted">{size(f.size)}</span>
            </button>
          </li>
        ))}
      </ul>
      <section className="card stack" aria-label={`File ${selected}`}>
        <div className="row" style={{ justifyContent: "space-between" }}>
          <code>{selected}</code>
          <span className="row small muted">
            {entry?.mime} · {entry ? size(entry.size) : ""}
            {isMarkdown && (
              <button type="button" className="btn btn-sm" onClick={() => setRendered(!rendered)}>
                {rendered ? "Show source" : "Show rendered"}
              </button>
            )}
          </span>
        </div>
        <ErrorNote error={file.error} />
        {!entry?.text ? (
          <p className="muted">Binary file ({entry?.mime}); agents cannot read it as text either.</p>
        ) : file.isPending ? (
          <p className="muted">Loading…</p>
        ) : file.data?.text != null && isMarkdown && rendered ? (
          <MarkdownView text={file.data.text} testId="skill-file-view" />
        ) : (
          <pre className="skill-viewer" data-testid="skill-file-view">
            {file.data?.text}
          </pre>
        )}
        {file.data?.truncated && <p className="muted small">The file is longer; the rest is not shown.</p>}
      </section>
    </div>
  );
}
