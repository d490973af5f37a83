"use client";
/**
 * An MCP server's page: its status and last error, its tools to review, how it is reached, what its
 * process wrote to stderr, and the input schemas of the tools agents can import.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { BusyButton } from "../../../_components/busy-button";
import { ErrorNote } from "../../../_components/error-note";
import { JsonView } from "../../../_components/json-view";
import { type RouterOutputs, useTRPC } from "../../../_lib/trpc";
import { ServerStatus } from "../status-pill";
import { McpServerConfig } from "./mcp-server-config";
import { McpServerOAuth } from "./mcp-server-oauth";
import { McpTools } from "./mcp-tools";

type Server = RouterOutputs["mcpServers"]["get"];

export function McpServerDetail({ name, canEdit }: { name: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const server = useQuery({ ...trpc.mcpServers.get.queryOptions({ name }), refetchInterval: 4000 });
  // A server's tools are capabilities too.
  const invalidate = () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: trpc.mcpServers.pathKey() }),
      qc.invalidateQueries({ queryKey: trpc.capabilities.pathKey() }),
    ]);
  const refresh = useMutation(trpc.mcpServers.refresh.mutationOptions({ onSuccess: invalidate }));
  const remove = useMutation(
    trpc.mcpServers.remove.mutationOptions({
      onSuccess: () => {
        void invalidate();
        router.push("/mcp-servers");
      },
    }),
  );
  const s = server.data;
  if (server.error) return <ErrorNote error={server.error} />;
  if (!s) return <p className="muted">Loading {name}…</p>;

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
            <BusyButton
              busy={refresh.isPending}
              busyLabel="Connecting…"
              onClick={() => refresh.mutate({ name })}
            >
              Refresh tools
            </BusyButton>
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
      <ErrorNote error={refresh.error ?? remove.error} />
      {refresh.data?.connectError && (
        <div className="error-box" role="alert">
          {refresh.data.connectError}
        </div>
      )}
      <ServerProblems server={s} />
      {s.transport === "http" && <McpServerOAuth name={name} canEdit={canEdit} status={s.status} />}
      <McpTools name={name} server={s} canEdit={canEdit} onDone={invalidate} />
      <div className="grid grid-2">
        <McpServerConfig name={name} server={s} canEdit={canEdit} onDone={invalidate} />
        <Stderr tail={s.stderrTail} />
      </div>
      <InputSchemas tools={s.toolList.filter((t) => t.status === "accepted")} />
    </div>
  );
}

function ServerProblems({ server: s }: { server: Server }) {
  return (
    <>
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
    </>
  );
}

function Stderr({ tail }: { tail: string }) {
  return (
    <section className="card" aria-labelledby="stderr-h">
      <h2 id="stderr-h">
        stderr <span className="field-hint">last output of the server's process (capped)</span>
      </h2>
      {tail.trim() ? (
        <pre className="code-view small" data-testid="stderr">
          {tail.trimEnd().split("\n").slice(-40).join("\n")}
        </pre>
      ) : (
        <p className="muted small">Nothing written yet.</p>
      )}
    </section>
  );
}

function InputSchemas({ tools }: { tools: Server["toolList"] }) {
  if (tools.length === 0) return null;
  return (
    <section className="card" aria-labelledby="schemas-h">
      <h2 id="schemas-h">Input schemas</h2>
      {tools.map((t) => (
        <details key={t.name}>
          <summary>
            <code>{t.capability}</code>
          </summary>
          <JsonView value={t.inputSchema} />
        </details>
      ))}
    </section>
  );
}
