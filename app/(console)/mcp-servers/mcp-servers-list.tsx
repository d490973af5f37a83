"use client";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { type Column, DataTable } from "../../_components/data-table";
import { DisclosureButton } from "../../_components/disclosure-button";
import { ErrorNote } from "../../_components/error-note";
import { RelativeTime } from "../../_components/relative-time";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";
import { AddServerForm, ImportForm } from "./add-server-form";
import { ServerStatus } from "./status-pill";

type ServerRow = RouterOutputs["mcpServers"]["list"][number];

const COLUMNS: Column<ServerRow>[] = [
  {
    label: "Server",
    cell: (s) => (
      <>
        <Link href={`/mcp-servers/${s.name}`}>
          <strong>{s.name}</strong>
        </Link>{" "}
        <span className="pill">{s.transport}</span>
      </>
    ),
  },
  {
    label: "Status",
    cell: (s) => (
      <>
        <ServerStatus status={s.status} />
        {s.lastError && <div className="small muted clamp-2">{s.lastError}</div>}
      </>
    ),
  },
  {
    label: "Tools",
    cell: (s) => (
      <>
        {s.accepted}/{s.tools} accepted
        {s.pending > 0 && <span className="pill pill-wait"> {s.pending} to review</span>}
      </>
    ),
  },
  { label: "Upstream", className: "mono small clamp-2", cell: (s) => s.target },
  { label: "Updated", className: "small muted", cell: (s) => <RelativeTime value={s.updatedAt} /> },
];

export function McpServersList({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const servers = useQuery({ ...trpc.mcpServers.list.queryOptions(), refetchInterval: 5000 });
  const [panel, setPanel] = useState<"add" | "import" | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const list = servers.data ?? [];
  const invalidate = () => qc.invalidateQueries({ queryKey: trpc.mcpServers.pathKey() });
  return (
    <div className="mcp-page">
      <div className="page-head">
        <div>
          <h1>MCP servers</h1>
          <p>
            External MCP servers behind the gate: a server is the module <code>toolstore/&lt;name&gt;</code>,
            each tool an export once an admin accepts its category.
          </p>
        </div>
        {canEdit && (
          <div className="row">
            <DisclosureButton open={panel === "import"} onToggle={(open) => setPanel(open ? "import" : null)}>
              Import JSON…
            </DisclosureButton>
            <DisclosureButton
              className="btn btn-primary"
              open={panel === "add"}
              onToggle={(open) => setPanel(open ? "add" : null)}
            >
              Add server…
            </DisclosureButton>
          </div>
        )}
      </div>
      {panel === "add" && (
        <section className="card" style={{ marginBottom: 12 }}>
          <AddServerForm
            onDone={(name) => {
              void invalidate();
              router.push(`/mcp-servers/${name}`);
            }}
          />
        </section>
      )}
      {panel === "import" && (
        <section className="card" style={{ marginBottom: 12 }}>
          <ImportForm
            onDone={(message) => {
              setNote(message);
              setPanel(null);
              void invalidate();
            }}
          />
        </section>
      )}
      {note && (
        <div className="card small" role="status" style={{ marginBottom: 12 }}>
          {note}
        </div>
      )}
      <ErrorNote error={servers.error} />
      {servers.isPending ? (
        <p className="muted">Loading MCP servers…</p>
      ) : list.length === 0 ? (
        <div className="card empty">
          <strong>No MCP servers yet</strong>
          {canEdit
            ? "Press Add server, import a client's mcpServers JSON, or run "
            : "Ask an admin to add one, or run "}
          <code>
            npm run toolstore -- mcp-servers add memory --command npx --arg -y --arg
            @modelcontextprotocol/server-memory
          </code>
        </div>
      ) : (
        <div className="card">
          <DataTable label="MCP servers" columns={COLUMNS} rows={list} rowKey={(s) => s.name} />
        </div>
      )}
    </div>
  );
}
