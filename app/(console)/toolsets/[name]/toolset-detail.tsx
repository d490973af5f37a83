"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useState } from "react";
import Markdown from "react-markdown";
import remarkGfm from "remark-gfm";
import { CategoryBadge } from "../../../_components/category-badge";
import { CopyButton } from "../../../_components/copy-button";
import { DataTable } from "../../../_components/data-table";
import { ErrorNote } from "../../../_components/error-note";
import { TabPanel, Tabs } from "../../../_components/tabs";
import { useTRPC } from "../../../_lib/trpc";
import { InlineCode } from "../inline-code";
import { codeFileOf, LanguageBadge } from "../language-badge";
import { PublishError } from "../publish-errors";
import { UploadForm } from "../upload-form";
import { Params } from "./params";
import type { Schema } from "./schema-form";
import { ToolsetSettings } from "./toolset-settings";
import { TryIt } from "./try-it";
import { VersionsList } from "./versions-list";

const TABS = [
  { id: "overview", label: "Overview" },
  { id: "try", label: "Try it" },
  { id: "versions", label: "Versions" },
  { id: "settings", label: "Settings" },
  { id: "code", label: "Code" },
] as const;
type TabId = (typeof TABS)[number]["id"];

export function ToolsetDetail({
  name,
  canEdit,
  canRun,
  sessionId,
}: {
  name: string;
  canEdit: boolean;
  canRun: boolean;
  sessionId: string;
}) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const toolset = useQuery(trpc.toolsets.get.queryOptions({ name }));
  const [tab, setTab] = useState<TabId>("overview");
  const [tryBinding, setTryBinding] = useState<string | null>(null);
  const [uploading, setUploading] = useState(false);
  const [published, setPublished] = useState<string | null>(null);
  const invalidate = () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: trpc.toolsets.pathKey() }),
      qc.invalidateQueries({ queryKey: trpc.capabilities.pathKey() }),
    ]);
  const republish = useMutation(
    trpc.toolsets.publishFolder.mutationOptions({
      onSuccess: (result) => {
        setPublished(result.message);
        void invalidate();
      },
    }),
  );

  useEffect(() => {
    const fromHash = window.location.hash.slice(1);
    if (TABS.some((t) => t.id === fromHash)) setTab(fromHash as TabId);
  }, []);

  function choose(id: TabId) {
    setTab(id);
    window.history.replaceState(null, "", `#${id}`);
  }

  if (toolset.error) {
    return (
      <>
        <div className="page-head">
          <div>
            <p>
              <Link href="/toolsets">← Toolsets</Link>
            </p>
            <h1>{name}</h1>
          </div>
        </div>
        <ErrorNote error={toolset.error} />
      </>
    );
  }
  const t = toolset.data;
  const categoryOf = new Map(t?.capabilities.map((c) => [c.exportName, c]) ?? []);
  const codeFile = codeFileOf(t?.language ?? "typescript");

  return (
    <>
      <div className="page-head">
        <div>
          <p className="small">
            <Link href="/toolsets">← Toolsets</Link>
          </p>
          <h1>
            {name}{" "}
            {t?.version != null && (
              <span className="pill" style={{ verticalAlign: "middle" }}>
                v{t.version}
              </span>
            )}{" "}
            {t?.version != null && <LanguageBadge language={t.language} />}
          </h1>
          <p>
            {t ? (
              t.description ? (
                <InlineCode text={t.description} />
              ) : t.language === "python" ? (
                "No description in the module docstring of toolset.py."
              ) : (
                "No description in the header comment of toolset.ts."
              )
            ) : (
              "Loading…"
            )}
          </p>
          {t?.contentHash && (
            <p className="small row">
              <span>
                import from <code>toolstore/{name}</code> · hash{" "}
                <code title={t.contentHash}>{t.contentHash.slice(0, 12)}</code>
              </span>
              <CopyButton text={t.contentHash} label="Copy hash" />
            </p>
          )}
        </div>
        {canEdit && (
          <div className="row">
            <button
              type="button"
              className="btn"
              aria-expanded={uploading}
              onClick={() => setUploading(!uploading)}
            >
              Upload new version…
            </button>
            {t?.hasFolder && (
              <button
                type="button"
                className="btn btn-primary"
                disabled={republish.isPending}
                onClick={() => republish.mutate({ name })}
                title={`Publish toolsets/${name} again from the folder`}
              >
                {republish.isPending ? "Publishing…" : "Publish from folder"}
              </button>
            )}
          </div>
        )}
      </div>
      {uploading && (
        <section className="card" style={{ marginBottom: 12 }} aria-labelledby="upload-h">
          <UploadForm
            fixedName={name}
            onDone={(result) => {
              setPublished(result.message);
              setUploading(false);
              void invalidate();
            }}
            onClose={() => setUploading(false)}
          />
        </section>
      )}
      <PublishError error={republish.error} />
      {published && (
        <div className="card small row" role="status" style={{ marginBottom: 12, alignItems: "flex-start" }}>
          <pre style={{ flex: 1 }}>{published}</pre>
          <button type="button" className="btn btn-sm" onClick={() => setPublished(null)}>
            Dismiss
          </button>
        </div>
      )}

      <Tabs
        label="Toolset sections"
        idPrefix="toolset"
        selected={tab}
        onSelect={choose}
        tabs={TABS.map((x) => ({
          id: x.id,
          label: `${x.label}${x.id === "versions" && t ? ` (${t.versions.length})` : ""}`,
        }))}
      />

      <TabPanel idPrefix="toolset" selected={tab}>
        {!t ? (
          <p className="muted">Loading {name}…</p>
        ) : tab === "overview" ? (
          <div className="stack">
            <section className="card" aria-labelledby="bindings-h">
              <h2 id="bindings-h">Bindings</h2>
              {t.bindings.length === 0 ? (
                <div className="empty">
                  <strong>No bindings</strong>
                  {t.language === "python" ? (
                    <>
                      Decorate a function in toolset.py with <code>@tool(category="read")</code> (or write,
                      execute, external).
                    </>
                  ) : (
                    <>
                      Mark an exported function in toolset.ts with <code>@tool read</code> (or write, execute,
                      external).
                    </>
                  )}
                </div>
              ) : (
                <DataTable
                  label="Bindings"
                  rows={t.bindings}
                  rowKey={(b) => b.name}
                  rowProps={(b) => ({ "data-testid": `binding-${b.name}` })}
                  columns={[
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
                    {
                      label: "Category",
                      cell: (b) => {
                        const cap = categoryOf.get(b.name);
                        return (
                          <>
                            <CategoryBadge category={cap?.category ?? b.category} />
                            {b.categoryPending && (!cap || cap.category === cap.declaredCategory) && (
                              <div className="small pill-wait" data-testid={`undeclared-${b.name}`}>
                                no category declared (bare <code>@tool</code>): runs as {b.category} until an
                                admin sets one — <Link href="/capabilities">review</Link>
                              </div>
                            )}
                            {cap?.pendingCategory && (
                              <div className="small pill-wait">
                                declares <CategoryBadge category={cap.pendingCategory} /> —{" "}
                                <Link href="/capabilities">review</Link>
                              </div>
                            )}
                          </>
                        );
                      },
                    },
                    {
                      label: "Actions",
                      hideLabel: true,
                      className: "actions",
                      cell: (b) => (
                        <button
                          type="button"
                          className="btn btn-sm"
                          aria-label={`Try ${b.name}`}
                          onClick={() => {
                            setTryBinding(b.name);
                            choose("try");
                          }}
                        >
                          Try
                        </button>
                      ),
                    },
                  ]}
                />
              )}
            </section>
            <section className="card doc-card" aria-labelledby="doc-h">
              <h2 id="doc-h" className="doc-label">
                doc.md <span className="field-hint">what agents read about this toolset</span>
              </h2>
              <div className="markdown" data-testid="toolset-doc">
                {t.doc ? (
                  <Markdown
                    skipHtml
                    remarkPlugins={[remarkGfm]}
                    components={{
                      a: ({ href, children }) => (
                        <a href={href} target="_blank" rel="noopener noreferrer nofollow">
                          {children}
                        </a>
                      ),
                      img: ({ alt }) => <span className="muted">[image: {alt}]</span>,
                      // The page has its own h1: the document's headings sit one level below.
                      h1: ({ children }) => <h2 className="md-h1">{children}</h2>,
                      h2: ({ children }) => <h3 className="md-h2">{children}</h3>,
                      h3: ({ children }) => <h4 className="md-h3">{children}</h4>,
                    }}
                  >
                    {t.doc}
                  </Markdown>
                ) : (
                  <p className="muted">No doc.md in this version.</p>
                )}
              </div>
            </section>
          </div>
        ) : tab === "try" ? (
          <TryIt
            toolset={name}
            bindings={t.bindings.map((b) => ({
              name: b.name,
              description: b.description,
              signature: b.signature,
              category: categoryOf.get(b.name)?.category ?? b.category,
              inputSchema: b.inputSchema as Schema,
            }))}
            initial={tryBinding}
            canRun={canRun}
            sessionId={sessionId}
          />
        ) : tab === "versions" ? (
          <VersionsList name={name} versions={t.versions} current={t.version} />
        ) : tab === "settings" ? (
          <ToolsetSettings
            name={name}
            timeoutMs={t.timeoutMs}
            allowedHosts={t.allowedHosts}
            declared={{ hosts: t.declarations.hosts, timeoutMs: t.declarations.timeoutMs ?? null }}
            env={t.env}
            canEdit={canEdit}
          />
        ) : (
          <section className="card" aria-label={codeFile}>
            <div className="row" style={{ justifyContent: "space-between", marginBottom: 8 }}>
              <h2 style={{ margin: 0 }}>{codeFile}</h2>
              <CopyButton text={t.source} label="Copy code" />
            </div>
            <pre className="code-view">
              {t.source.split("\n").map((line, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: lines of a fixed text
                <span key={i} className="code-line">
                  <span className="line-no" aria-hidden>
                    {i + 1}
                  </span>
                  {line}
                  {"\n"}
                </span>
              ))}
            </pre>
          </section>
        )}
      </TabPanel>
    </>
  );
}
