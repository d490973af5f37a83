"use client";
import Link from "next/link";
import { CategoryBadge } from "@/app/_components/category-badge";
import { ErrorNote } from "@/app/_components/error-note";
import type { RouterOutputs } from "@/app/_lib/trpc";

type ModuleInfo = RouterOutputs["playground"]["modules"]["modules"][number];

/** What the action may import, folded under the editor. */
export function ModuleList({ modules, error }: { modules: ModuleInfo[] | undefined; error: unknown }) {
  if (error) return <ErrorNote error={error} />;
  if (!modules) return <div className="module-list muted">Loading modules…</div>;
  return (
    <details className="module-list">
      <summary>
        {modules.length} modules mounted ·{" "}
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
        </ul>
      )}
    </details>
  );
}
