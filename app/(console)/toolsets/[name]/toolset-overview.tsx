"use client";
/** A toolset's Overview tab: its bindings (with categories waiting for review) and its doc.md. */
import Link from "next/link";
import { CategoryBadge } from "../../../_components/category-badge";
import { type Column, DataTable } from "../../../_components/data-table";
import { MarkdownView } from "../../../_components/markdown-view";
import type { RouterOutputs } from "../../../_lib/trpc";
import { Params } from "./params";

type Toolset = RouterOutputs["toolsets"]["get"];
type Binding = Toolset["bindings"][number];
type Capability = Toolset["capabilities"][number];

function BindingCategory({ binding: b, capability: cap }: { binding: Binding; capability?: Capability }) {
  return (
    <>
      <CategoryBadge category={cap?.category ?? b.category} />
      {b.categoryPending && (!cap || cap.category === cap.declaredCategory) && (
        <div className="small pill-wait" data-testid={`undeclared-${b.name}`}>
          no category declared (bare <code>@tool</code>): runs as {b.category} until an admin sets one —{" "}
          <Link href="/capabilities">review</Link>
        </div>
      )}
      {cap?.pendingCategory && (
        <div className="small pill-wait">
          declares <CategoryBadge category={cap.pendingCategory} /> — <Link href="/capabilities">review</Link>
        </div>
      )}
    </>
  );
}

function NoBindings({ language }: { language: string }) {
  return (
    <div className="empty">
      <strong>No bindings</strong>
      {language === "python" ? (
        <>
          Decorate a function in toolset.py with <code>@tool(category="read")</code> (or write, execute,
          external).
        </>
      ) : (
        <>
          Mark an exported function in toolset.ts with <code>@tool read</code> (or write, execute, external).
        </>
      )}
    </div>
  );
}

export function ToolsetOverview({
  toolset: t,
  categoryOf,
  onTry,
}: {
  toolset: Toolset;
  categoryOf: ReadonlyMap<string, Capability>;
  /** "Try" on a binding's row: open the Try it tab on it. */
  onTry: (binding: string) => void;
}) {
  const columns: Column<Binding>[] = [
    {
      label: "Binding",
      style: { width: "36%" },
      cell: (b) => (
        <>
          <code>{b.name}</code>
          <div className="small muted clamp-3" title={b.description}>
            {b.description}
          </div>
        </>
      ),
    },
    { label: "Parameters", cell: (b) => <Params schema={b.inputSchema} /> },
    { label: "Category", cell: (b) => <BindingCategory binding={b} capability={categoryOf.get(b.name)} /> },
    {
      label: "Actions",
      hideLabel: true,
      className: "actions",
      cell: (b) => (
        <button
          type="button"
          className="btn btn-sm"
          aria-label={`Try ${b.name}`}
          onClick={() => onTry(b.name)}
        >
          Try
        </button>
      ),
    },
  ];
  return (
    <div className="stack">
      <section className="card" aria-labelledby="bindings-h">
        <h2 id="bindings-h">Bindings</h2>
        {t.bindings.length === 0 ? (
          <NoBindings language={t.language} />
        ) : (
          <DataTable
            label="Bindings"
            rows={t.bindings}
            rowKey={(b) => b.name}
            rowProps={(b) => ({ "data-testid": `binding-${b.name}` })}
            columns={columns}
          />
        )}
      </section>
      <section className="card doc-card" aria-labelledby="doc-h">
        <h2 id="doc-h" className="doc-label">
          doc.md <span className="field-hint">what agents read about this toolset</span>
        </h2>
        <MarkdownView
          text={t.doc ?? ""}
          testId="toolset-doc"
          empty={<p className="muted">No doc.md in this version.</p>}
        />
      </section>
    </div>
  );
}
