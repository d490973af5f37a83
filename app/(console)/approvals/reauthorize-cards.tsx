"use client";
/** The inbox's "reauthorize" cards: upstream MCP servers whose OAuth token could not be refreshed. */
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "../../_lib/trpc";

export function ReauthorizeCards() {
  const trpc = useTRPC();
  const servers = useQuery({ ...trpc.mcpServers.needsReauth.queryOptions(), refetchInterval: 10_000 });
  if (!servers.data?.length) return null;
  return (
    <div className="stack" style={{ marginBottom: 12 }}>
      {servers.data.map((s) => (
        <section
          key={s.name}
          className="card once"
          data-testid="reauthorize-card"
          aria-label={`Reauthorize ${s.name}`}
        >
          <strong>{s.name}</strong> <span className="pill pill-bad">reauthorize</span>
          <p className="small" style={{ margin: "6px 0" }}>
            Calls to this MCP server fail until an admin signs in again. {s.lastError}
          </p>
          <Link className="btn btn-sm" href={`/mcp-servers/${encodeURIComponent(s.name)}`}>
            Open {s.name} and reauthorize
          </Link>
        </section>
      ))}
    </div>
  );
}
