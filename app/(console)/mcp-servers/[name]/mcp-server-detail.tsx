"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { CategoryBadge } from "../../../_components/category-badge";
import { ErrorNote } from "../../../_components/error-note";
import { JsonView } from "../../../_components/json-view";
import { RelativeTime } from "../../../_components/relative-time";
import { useTRPC } from "../../../_lib/trpc";
import { ServerStatus } from "../status-pill";

const CATEGORIES = ["read", "write", "execute", "external"] as const;

export function McpServerDetail({ name, canEdit }: { name: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const server = useQuery({ ...trpc.mcpServers.get.queryOptions({ name }), refetchInterval: 4000 });
  const invalidate = () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: trpc.mcpServers.pathKey() }),
      qc.invalidateQueries({ queryKey: trpc.capabilities.pathKey() }),
    ]);
  const categorize = useMutation(trpc.mcpServers.categorize.mutationOptions({ onSuccess: invalidate }));
  const refresh = useMutation(trpc.mcpServers.refresh.mutationOptions({ onSuccess: invalidate }));
  const remove = useMutation(
    trpc.mcpServers.remove.mutationOptions({
      onSuccess: () => {
        void invalidate();
        router.push("/mcp-servers");
      },
    }),
  );
  const [chosen, setChosen] = useState<Record<string, string>>({});
  const [diffOf, setDiffOf] = useState<string | null>(null);
  const s = server.data;
  if (server.error) return <ErrorNote error={server.error} />;
  if (!s) return <p className="muted">Loading {name}…</p>;
  const reviewable = s.toolList.filter((t) => t.status === "pending" && t.proposedCategory);

  return (
    <div className="stack mcp-page">
      <div className="page-head">
        <div>
          <p className="small">
            <Link href="/mcp-servers">MCP servers</Link> /
          </p>
          <h1>
            {s.name} <span className="pill">{s.transport}</span> <ServerStatus status={s.status} />
          </h1>
          <p>
            Imported as <code>toolstore/{s.name}</code>. <span className="mono small">{s.target}</span>
          </p>
        </div>
        {canEdit && (
          <div className="row">
            <button
              type="button"
              className="btn"
              disabled={refresh.isPending}
              onClick={() => refresh.mutate({ name })}
            >
              {refresh.isPending ? "Connecting…" : "Refresh tools"}
            </button>
            <button
              type="button"
              className="btn btn-danger"
              onClick={() => {
                if (window.confirm(`Remove ${s.name}? Its tools stop being importable.`))
                  remove.mutate({ name });
              }}
            >
              Remove
            </button>
          </div>
        )}
      </div>
      <ErrorNote error={refresh.error ?? remove.error ?? categorize.error} />
      {refresh.data?.connectError && (
        <div className="error-box" role="alert">
          {refresh.data.connectError}
        </div>
      )}
      {s.lastError && (
        <div className="error-box" role="status" aria-label="Last error">
          <code>last error</code> {s.lastError}
        </div>
      )}
      {s.problems.map((p) => (
        <div key={p} className="card small pill-bad">
          {p}
        </div>
      ))}

      <section className="card" aria-labelledby="tools-h">
        <div className="row" style={{ justifyContent: "space-between" }}>
          <h2 id="tools-h">
            Tools{" "}
            <span className="field-hint">
              {s.accepted} accepted, {s.pending} not importable
            </span>
          </h2>
          {canEdit && reviewable.length > 0 && (
            <button
              type="button"
              className="btn btn-primary btn-sm"
              disabled={categorize.isPending}
              onClick={() =>
                categorize.mutate({
                  name,
                  rules: reviewable.map((t) => ({ glob: t.name, category: "proposed" as const })),
                })
              }
            >
              Accept all proposed ({reviewable.length})
            </button>
          )}
        </div>
        {s.toolList.length === 0 ? (
          <div className="empty">
            <strong>No tools listed</strong>
            {s.toolsSyncedAt
              ? "The server lists no tools."
              : "The server has not been reached yet: press Refresh tools."}
          </div>
        ) : (
          <div className="table-wrap">
            <table className="dense" aria-label="Tools">
              <thead>
                <tr>
                  <th scope="col">Tool</th>
                  <th scope="col">Proposed</th>
                  <th scope="col">Category</th>
                  <th scope="col">Status</th>
                  {canEdit && (
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  )}
                </tr>
              </thead>
              <tbody>
                {s.toolList.map((t) => {
                  const pick = chosen[t.name] ?? t.effectiveCategory ?? t.proposedCategory ?? "";
                  return (
                    <tr key={t.name} data-testid={`tool-${t.name}`}>
                      <td>
                        <code>{t.exportName}</code>
                        {t.exportName !== t.name && <span className="small muted"> (upstream {t.name})</span>}
                        <div className="small muted clamp-2" title={t.description}>
                          {t.description || "No description."}
                        </div>
                      </td>
                      <td>
                        <CategoryBadge category={t.proposedCategory} />
                      </td>
                      <td>
                        {t.status === "accepted" ? (
                          <CategoryBadge category={t.effectiveCategory} />
                        ) : (
                          <span className="muted">—</span>
                        )}
                      </td>
                      <td>
                        <span
                          className={`pill ${t.status === "accepted" ? "pill-ok" : t.status === "collision" ? "pill-bad" : "pill-wait"}`}
                        >
                          {t.status}
                        </span>
                        {t.reason && <div className="small muted">{t.reason}</div>}
                        {t.diff && (
                          <button
                            type="button"
                            className="btn btn-sm"
                            aria-expanded={diffOf === t.name}
                            onClick={() => setDiffOf(diffOf === t.name ? null : t.name)}
                          >
                            {diffOf === t.name ? "Hide change" : "Show change"}
                          </button>
                        )}
                        {diffOf === t.name && t.diff && (
                          <pre className="code-view small" data-testid={`diff-${t.name}`}>
                            {t.diff.map((line, i) => (
                              <div
                                // biome-ignore lint/suspicious/noArrayIndexKey: lines of one diff
                                key={i}
                                className={`diff-line ${line.startsWith("+") ? "diff-add" : line.startsWith("-") ? "diff-del" : ""}`}
                              >
                                {line}
                              </div>
                            ))}
                          </pre>
                        )}
                      </td>
                      {canEdit && (
                        <td className="actions">
                          {t.status !== "collision" && (
                            <span className="row">
                              <label>
                                <span className="visually-hidden">Category of {t.name}</span>
                                <select
                                  value={pick}
                                  onChange={(e) => setChosen({ ...chosen, [t.name]: e.target.value })}
                                >
                                  <option value="" disabled>
                                    choose…
                                  </option>
                                  {CATEGORIES.map((c) => (
                                    <option key={c} value={c}>
                                      {c}
                                    </option>
                                  ))}
                                </select>
                              </label>
                              <button
                                type="button"
                                className="btn btn-sm"
                                disabled={
                                  !pick ||
                                  categorize.isPending ||
                                  (t.status === "accepted" && pick === t.effectiveCategory)
                                }
                                aria-label={`${t.status === "accepted" ? "Set" : "Accept"} ${t.name}`}
                                onClick={() =>
                                  categorize.mutate({
                                    name,
                                    rules: [{ glob: t.name, category: pick as (typeof CATEGORIES)[number] }],
                                  })
                                }
                              >
                                {t.status === "accepted" ? "Set" : "Accept"}
                              </button>
                            </span>
                          )}
                        </td>
                      )}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <div className="grid grid-2">
        <section className="card" aria-labelledby="config-h">
          <h2 id="config-h">Configuration</h2>
          <dl className="kv small">
            {s.transport === "stdio" ? (
              <>
                <dt>command</dt>
                <dd className="mono">{[s.command, ...s.args].join(" ")}</dd>
                <dt>environment</dt>
                <dd className="mono">
                  {Object.keys(s.env).length
                    ? Object.entries(s.env).map(([k, v]) => <div key={k}>{`${k}=${v}`}</div>)
                    : "—"}
                </dd>
              </>
            ) : (
              <>
                <dt>url</dt>
                <dd className="mono">{s.url}</dd>
                <dt>headers</dt>
                <dd className="mono">
                  {Object.keys(s.headers).length
                    ? Object.entries(s.headers).map(([k, v]) => <div key={k}>{`${k}: ${v}`}</div>)
                    : "—"}
                </dd>
              </>
            )}
            <dt>call timeout</dt>
            <dd>{s.callTimeoutMs} ms</dd>
            <dt>tools listed</dt>
            <dd>{s.toolsSyncedAt ? <RelativeTime value={s.toolsSyncedAt} /> : "never"}</dd>
          </dl>
          <Secrets
            name={name}
            stored={s.secrets}
            missing={s.missingSecrets}
            canEdit={canEdit}
            onDone={invalidate}
          />
        </section>
        <section className="card" aria-labelledby="stderr-h">
          <h2 id="stderr-h">
            stderr <span className="field-hint">last output of the server's process (capped)</span>
          </h2>
          {s.stderrTail.trim() ? (
            <pre className="code-view small" data-testid="stderr">
              {s.stderrTail.trimEnd().split("\n").slice(-40).join("\n")}
            </pre>
          ) : (
            <p className="muted small">Nothing written yet.</p>
          )}
        </section>
      </div>
      {s.toolList.some((t) => t.status === "accepted") && (
        <section className="card" aria-labelledby="schemas-h">
          <h2 id="schemas-h">Input schemas</h2>
          {s.toolList
            .filter((t) => t.status === "accepted")
            .map((t) => (
              <details key={t.name}>
                <summary>
                  <code>{t.capability}</code>
                </summary>
                <JsonView value={t.inputSchema} />
              </details>
            ))}
        </section>
      )}
    </div>
  );
}

function Secrets({
  name,
  stored,
  missing,
  canEdit,
  onDone,
}: {
  name: string;
  stored: string[];
  missing: string[];
  canEdit: boolean;
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const [secret, setSecret] = useState(missing[0] ?? "");
  const [value, setValue] = useState("");
  const set = useMutation(
    trpc.mcpServers.setSecret.mutationOptions({
      onSuccess: () => {
        setValue("");
        onDone();
      },
    }),
  );
  return (
    <div className="stack">
      <h3>Secrets</h3>
      <p className="small muted" style={{ margin: 0 }}>
        Named in env or headers as <code>{"{{secret:NAME}}"}</code>; opened only when connecting, never shown.
      </p>
      <div className="small">
        {stored.map((n) => (
          <span key={n} className="pill pill-ok">
            {n}
          </span>
        ))}
        {missing.map((n) => (
          <span key={n} className="pill pill-bad" title="named but not set">
            {n} not set
          </span>
        ))}
        {stored.length + missing.length === 0 && <span className="muted">none</span>}
      </div>
      {canEdit && (
        <form
          className="inline-form row"
          onSubmit={(e) => {
            e.preventDefault();
            set.mutate({ name, secret: secret.trim(), value });
          }}
        >
          <label>
            <span className="visually-hidden">Secret name</span>
            <input placeholder="NAME" value={secret} onChange={(e) => setSecret(e.target.value)} required />
          </label>
          <label>
            <span className="visually-hidden">Secret value</span>
            <input
              type="password"
              placeholder="value"
              autoComplete="off"
              value={value}
              onChange={(e) => setValue(e.target.value)}
              required
            />
          </label>
          <button type="submit" className="btn btn-sm" disabled={set.isPending}>
            Set secret
          </button>
        </form>
      )}
      <ErrorNote error={set.error} />
      {set.data?.connectError && <div className="small pill-bad">{set.data.connectError}</div>}
    </div>
  );
}
