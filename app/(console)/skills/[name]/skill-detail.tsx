"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { CopyButton } from "../../../_components/copy-button";
import { ErrorNote } from "../../../_components/error-note";
import { MarkdownView } from "../../../_components/markdown-view";
import { useTRPC } from "../../../_lib/trpc";
import { SkillFiles } from "./skill-files";
import { SkillVersions } from "./skill-versions";

/** A link that opens the rules form pre-filled with one tool the skill asks for. */
function ruleLink(skill: string, tool: string) {
  const params = new URLSearchParams({
    effect: "allow",
    pattern: tool,
    description: `allowed-tools of skill ${skill}`,
  });
  return `/rules?${params}`;
}

export function SkillDetail({ name, canEdit }: { name: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const [version, setVersion] = useState<number | undefined>(undefined);
  const skill = useQuery(trpc.skills.get.queryOptions({ name, ...(version ? { version } : {}) }));
  const [confirm, setConfirm] = useState(false);
  const remove = useMutation(
    trpc.skills.remove.mutationOptions({
      onSuccess: async () => {
        await qc.invalidateQueries({ queryKey: trpc.skills.pathKey() });
        router.push("/skills");
      },
    }),
  );

  if (skill.isPending) return <p className="muted">Loading {name}…</p>;
  if (skill.error || !skill.data) {
    return (
      <>
        <ErrorNote error={skill.error} />
        <Link href="/skills">All skills</Link>
      </>
    );
  }
  const s = skill.data;
  const usage = `import { load } from "toolstore/skills";\nexport default async function () {\n  return (await load({ name: "${s.name}" })).body;\n}`;

  return (
    <>
      <div className="page-head">
        <div>
          <p className="small">
            <Link href="/skills">Skills</Link> /
          </p>
          <h1>
            {s.name} <span className="pill">v{s.version}</span>
            {!s.current && <span className="pill pill-wait">not current</span>}
          </h1>
          <p>{s.description}</p>
          <p className="small muted">
            {s.license ? <>License: {s.license} · </> : null}
            {s.files.length} files · hash <code title={s.contentHash}>{s.contentHash.slice(0, 12)}</code>
          </p>
        </div>
        {canEdit && (
          <div className="row">
            {confirm ? (
              <>
                <button type="button" className="btn btn-danger" onClick={() => remove.mutate({ name })}>
                  Remove {s.name} and all its versions
                </button>
                <button type="button" className="btn" onClick={() => setConfirm(false)}>
                  Keep it
                </button>
              </>
            ) : (
              <button type="button" className="btn" onClick={() => setConfirm(true)}>
                Remove…
              </button>
            )}
          </div>
        )}
      </div>
      <ErrorNote error={remove.error} />

      {s.allowedTools.length > 0 && (
        <section className="card" aria-labelledby="allowed-h" style={{ marginBottom: 12 }}>
          <h2 id="allowed-h">allowed-tools</h2>
          <p className="small muted">
            The skill asks for these tools. ToolStore never grants them on the skill's word; an admin may turn
            one into a rule.
          </p>
          <ul className="param-list">
            {s.allowedTools.map((tool) => (
              <li key={tool} className="row">
                <code>{tool}</code>
                {canEdit && (
                  <Link className="btn btn-sm" href={ruleLink(s.name, tool)}>
                    Make a rule…
                  </Link>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}

      <section className="card" aria-labelledby="skillmd-h" style={{ marginBottom: 12 }}>
        <div className="row" style={{ justifyContent: "space-between" }}>
          <h2 id="skillmd-h">SKILL.md</h2>
          <CopyButton text={usage} label="Copy an action that loads it" />
        </div>
        <MarkdownView text={s.body} testId="skill-body" empty={<p className="muted">The body is empty.</p>} />
      </section>

      <section className="card" aria-labelledby="files-h" style={{ marginBottom: 12 }}>
        <h2 id="files-h">Files</h2>
        <SkillFiles key={`${s.version}`} name={s.name} version={s.version} files={s.files} />
      </section>

      <section className="card" aria-labelledby="versions-h">
        <div className="row" style={{ justifyContent: "space-between" }}>
          <h2 id="versions-h">Versions</h2>
          <label className="small">
            Show version{" "}
            <select
              value={version ?? ""}
              onChange={(e) => setVersion(e.target.value ? Number(e.target.value) : undefined)}
            >
              <option value="">current</option>
              {s.versions.map((v) => (
                <option key={v.version} value={v.version}>
                  v{v.version}
                </option>
              ))}
            </select>
          </label>
        </div>
        <SkillVersions name={s.name} versions={s.versions} />
      </section>
    </>
  );
}
