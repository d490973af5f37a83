"use client";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { DisclosureButton } from "../../_components/disclosure-button";
import { ErrorNote } from "../../_components/error-note";
import { RelativeTime } from "../../_components/relative-time";
import { ListCount, SearchToolbar } from "../../_components/search-toolbar";
import { useTRPC } from "../../_lib/trpc";
import { UploadSkill } from "./upload-skill";

const kib = (n: number) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`);

export function SkillsList({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [query, setQuery] = useState("");
  const skills = useQuery(trpc.skills.list.queryOptions({ query }));
  const all = useQuery(trpc.skills.list.queryOptions({}));
  const [uploading, setUploading] = useState(false);
  const list = skills.data ?? [];
  const total = all.data?.length ?? 0;

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Skills</h1>
          <p>
            A skill is a folder with <code>SKILL.md</code> and optional files: instructions a person wrote.
            Agents read them step by step through <code>toolstore/skills</code>; MCP clients see them as{" "}
            <code>skill://</code> resources.
          </p>
        </div>
        {canEdit && (
          <DisclosureButton className="btn btn-primary" open={uploading} onToggle={setUploading}>
            Upload…
          </DisclosureButton>
        )}
      </div>
      {uploading && (
        <section className="card" style={{ marginBottom: 12 }} aria-labelledby="upload-h">
          <UploadSkill
            onDone={() => void qc.invalidateQueries({ queryKey: trpc.skills.pathKey() })}
            onClose={() => setUploading(false)}
          />
        </section>
      )}
      <SearchToolbar label="Search skills" query={query} onQuery={setQuery}>
        <ListCount count={total} noun="skill" />
      </SearchToolbar>
      <ErrorNote error={skills.error} />
      {skills.isPending ? (
        <p className="muted">Loading skills…</p>
      ) : total === 0 ? (
        <div className="card empty">
          <strong>No skills yet</strong>
          Put skill folders in <code>skills/</code> (or <code>TOOLSTORE_SKILLS_DIR</code>) and restart
          {canEdit ? ", or press Upload." : ", or ask an admin to upload one."}
        </div>
      ) : list.length === 0 ? (
        <div className="card empty">
          <strong>No skill matches “{query}”</strong>
          Clear the search to see all {total}.
        </div>
      ) : (
        <ul className="toolset-list" aria-label="Skills">
          {list.map((s) => (
            <li key={s.name}>
              <Link href={`/skills/${s.name}`} className="card toolset-card">
                <span className="title">
                  <strong>{s.name}</strong>
                  <span className="pill">v{s.version}</span>
                </span>
                <p>{s.description}</p>
                <span className="row small muted">
                  {s.fileCount} file{s.fileCount === 1 ? "" : "s"} · {kib(s.totalBytes)}
                  {s.allowedTools.length > 0 && (
                    <span className="pill" title="Declared by the skill; grants nothing by itself">
                      asks for: {s.allowedTools.join(", ")}
                    </span>
                  )}
                </span>
                <span className="row small muted">
                  updated <RelativeTime value={s.updatedAt} />
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
