"use client";
/**
 * How ToolStore reaches an MCP server (command and environment, or URL and headers; timeout; when
 * its tools were last listed) and the secrets its configuration names, which an editor can set.
 */
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorNote } from "../../../_components/error-note";
import { RelativeTime } from "../../../_components/relative-time";
import { useTRPC } from "../../../_lib/trpc";
import type { ServerSectionProps } from "./mcp-tools";

function Pairs({ entries, separator }: { entries: Record<string, string>; separator: string }) {
  const pairs = Object.entries(entries);
  if (pairs.length === 0) return <>—</>;
  return (
    <>
      {pairs.map(([k, v]) => (
        <div key={k}>{`${k}${separator}${v}`}</div>
      ))}
    </>
  );
}

export function McpServerConfig({ name, server: s, canEdit, onDone }: ServerSectionProps) {
  return (
    <section className="card" aria-labelledby="config-h">
      <h2 id="config-h">Configuration</h2>
      <dl className="kv small">
        {s.transport === "stdio" ? (
          <>
            <dt>command</dt>
            <dd className="mono">{[s.command, ...s.args].join(" ")}</dd>
            <dt>environment</dt>
            <dd className="mono">
              <Pairs entries={s.env} separator="=" />
            </dd>
          </>
        ) : (
          <>
            <dt>url</dt>
            <dd className="mono">{s.url}</dd>
            <dt>headers</dt>
            <dd className="mono">
              <Pairs entries={s.headers} separator=": " />
            </dd>
          </>
        )}
        <dt>call timeout</dt>
        <dd>{s.callTimeoutMs} ms</dd>
        <dt>tools listed</dt>
        <dd>{s.toolsSyncedAt ? <RelativeTime value={s.toolsSyncedAt} /> : "never"}</dd>
      </dl>
      <Secrets name={name} stored={s.secrets} missing={s.missingSecrets} canEdit={canEdit} onDone={onDone} />
    </section>
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
