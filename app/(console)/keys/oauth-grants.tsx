"use client";
/** The Keys page's OAuth grants: clients a user signed in, each acting as an API key of that user. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { CopyButton } from "../../_components/copy-button";
import { DataTable } from "../../_components/data-table";
import { EmptyState } from "../../_components/empty-state";
import { ErrorNote } from "../../_components/error-note";
import { RelativeTime } from "../../_components/relative-time";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";

type Grant = RouterOutputs["apiKeys"]["grants"][number];

const REASONS: Record<string, string> = {
  user: "revoked",
  client: "revoked by the client",
  refresh_token_reused: "revoked: refresh token reused",
  code_reused: "revoked: code reused",
};

export function OAuthGrants({ publicUrl }: { publicUrl: string | null }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const grants = useQuery(trpc.apiKeys.grants.queryOptions());
  const revoke = useMutation(
    trpc.apiKeys.revokeGrant.mutationOptions({
      onSuccess: () => qc.invalidateQueries({ queryKey: trpc.apiKeys.grants.queryKey() }),
    }),
  );
  const [origin, setOrigin] = useState(publicUrl ?? "");
  useEffect(() => {
    if (!publicUrl) setOrigin(window.location.origin);
  }, [publicUrl]);
  const list = grants.data ?? [];
  const url = `${origin}/api/mcp`;
  return (
    <section className="card" aria-labelledby="grants-h">
      <h2 id="grants-h">
        OAuth grants <span className="muted small">{list.filter((g) => !g.revokedAt).length} active</span>
      </h2>
      <p className="muted small" style={{ marginTop: 0 }}>
        Clients that connect by URL (claude.ai and ChatGPT connectors, VS Code) need no key: give them{" "}
        <code>{url}</code> <CopyButton text={url} label="Copy URL" className="btn btn-sm" /> and sign in when
        they ask. You choose the mode and modules on the consent page.
      </p>
      <ErrorNote error={grants.error ?? revoke.error} />
      {grants.isPending ? (
        <p className="muted">Loading grants…</p>
      ) : list.length === 0 ? (
        <EmptyState title="No OAuth grants yet">
          Add ToolStore to an MCP client by its URL; after you sign in and allow it, it appears here.
        </EmptyState>
      ) : (
        <GrantsTable grants={list} revoking={revoke.isPending} onRevoke={(id) => revoke.mutate({ id })} />
      )}
    </section>
  );
}

function GrantsTable({
  grants,
  revoking,
  onRevoke,
}: {
  grants: Grant[];
  revoking: boolean;
  onRevoke: (id: string) => void;
}) {
  const [confirm, setConfirm] = useState<string | null>(null);
  return (
    <DataTable
      rows={grants}
      rowKey={(g) => g.id}
      rowProps={(g) => ({
        className: g.revokedAt ? "rule-off" : undefined,
        "data-testid": `grant-${g.clientName}`,
      })}
      columns={[
        {
          label: "Client",
          cell: (g) => (
            <>
              <strong>{g.clientName}</strong>
              <div className="small muted">
                {g.owner} · to {g.redirectHost} · since <RelativeTime value={g.createdAt} />
              </div>
            </>
          ),
        },
        { label: "Mode", cell: (g) => <span className="pill">{g.mode}</span> },
        {
          label: "Modules",
          cell: (g) =>
            g.modules.includes("*") ? (
              <span className="muted">all modules</span>
            ) : (
              <span className="row" style={{ gap: 4 }}>
                {g.modules.map((m) => (
                  <code key={m}>{m}</code>
                ))}
              </span>
            ),
        },
        { label: "Used", className: "small", cell: (g) => <RelativeTime value={g.lastUsedAt} /> },
        {
          label: "Actions",
          hideLabel: true,
          className: "actions",
          cell: (g) =>
            g.revokedAt ? (
              <span className="pill pill-bad">
                {REASONS[g.revokedReason ?? "user"] ?? "revoked"} <RelativeTime value={g.revokedAt} />
              </span>
            ) : confirm === g.id ? (
              <span className="row" style={{ justifyContent: "flex-end" }}>
                <button
                  type="button"
                  className="btn btn-sm btn-danger"
                  autoFocus
                  disabled={revoking}
                  onClick={() => {
                    onRevoke(g.id);
                    setConfirm(null);
                  }}
                >
                  Revoke now
                </button>
                <button type="button" className="btn btn-sm" onClick={() => setConfirm(null)}>
                  Keep
                </button>
              </span>
            ) : (
              <button
                type="button"
                className="btn btn-sm btn-danger"
                aria-label={`Revoke ${g.clientName}`}
                onClick={() => setConfirm(g.id)}
              >
                Revoke
              </button>
            ),
        },
      ]}
    />
  );
}
