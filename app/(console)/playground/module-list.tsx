"use client";
import Link from "next/link";
import { CategoryBadge } from "@/app/_components/category-badge";
import { ErrorNote } from "@/app/_components/error-note";
import type { RouterOutputs } from "@/app/_lib/trpc";

type ModuleInfo = RouterOutputs["playground"]["modules"]["modules"][number];
type LibraryInfo = RouterOutputs["playground"]["modules"]["libraries"][number];

/** What the action may import, folded under the editor. */
export function ModuleList({
  modules,
  libraries = [],
  error,
}: {
  modules: ModuleInfo[] | undefined;
  libraries?: LibraryInfo[];
  error: unknown;
}) {
  if (error) return <ErrorNote error={error} />;
  if (!modules) return <div className="module-list muted">Loading modules…</div>;
  return (
    <details className="module-list">
      <summary>
        {modules.length} modules mounted · {libraries.length} libraries ·{" "}
        <span className="muted">import them as toolstore/&lt;name&gt;</span>
      </summary>
      {modules.length === 0 ? (
        <p className="muted">
          No modules. Publish a toolset in <Link href="/toolsets">Toolsets</Link>.
        </p>
      ) : (
        <ul>
          {modules.map((m) => (
            <li key={m.name}>
              <code>toolstore/{m.name}</code> <span className="muted">{m.source}</span>
              <div className="row" style={{ gap: 6, marginTop: 2 }}>
                {m.exports.map((e) => (
                  <span key={e.name} className="export-chip" title={e.description}>
                    <code>{e.exportName}</code> <CategoryBadge category={e.category} />
                  </span>
                ))}
              </div>
            </li>
          ))}
          {libraries.map((l) => (
            <li key={`lib/${l.name}`}>
              <code>toolstore/lib/{l.name}</code> <span className="muted">library · no gate</span>
              <div className="row" style={{ gap: 6, marginTop: 2 }}>
                {l.exports.map((e) => (
                  <span key={e.name} className="export-chip" title={`${e.signature} — ${e.description}`}>
                    <code>{e.name}</code>
                  </span>
                ))}
              </div>
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}
