"use client";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorNote } from "../../_components/error-note";
import { useTRPC } from "../../_lib/trpc";

/** K=V lines (one per line) as a record; blank lines are skipped. */
function parsePairs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (!t) continue;
    const at = t.indexOf("=");
    if (at > 0) out[t.slice(0, at).trim()] = t.slice(at + 1).trim();
  }
  return out;
}

/** Add a stdio or Streamable HTTP server; it is reached at once so its tools appear for review. */
export function AddServerForm({ onDone }: { onDone: (name: string, connectError: string | null) => void }) {
  const trpc = useTRPC();
  const [transport, setTransport] = useState<"stdio" | "http">("stdio");
  const [name, setName] = useState("");
  const [command, setCommand] = useState("");
  const [args, setArgs] = useState("");
  const [env, setEnv] = useState("");
  const [url, setUrl] = useState("");
  const [headers, setHeaders] = useState("");
  const [secrets, setSecrets] = useState("");
  const save = useMutation(
    trpc.mcpServers.save.mutationOptions({ onSuccess: (r) => onDone(r.name, r.connectError) }),
  );
  return (
    <form
      className="stack"
      aria-label="Add an MCP server"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate({
          server: {
            name: name.trim(),
            transport,
            ...(transport === "stdio"
              ? {
                  command: command.trim(),
                  args: args
                    .split("\n")
                    .map((a) => a.trim())
                    .filter(Boolean),
                  env: parsePairs(env),
                }
              : { url: url.trim(), headers: parsePairs(headers) }),
            secrets: parsePairs(secrets),
          },
        });
      }}
    >
      <h2 id="add-h">Add an MCP server</h2>
      <div className="form-row">
        <label>
          Name <span className="field-hint">the module: toolstore/&lt;name&gt;</span>
          <input required value={name} onChange={(e) => setName(e.target.value)} placeholder="memory" />
        </label>
        <fieldset className="mode-options">
          <legend>Transport</legend>
          <label>
            <input type="radio" checked={transport === "stdio"} onChange={() => setTransport("stdio")} />{" "}
            stdio (a command)
          </label>
          <label>
            <input type="radio" checked={transport === "http"} onChange={() => setTransport("http")} />{" "}
            Streamable HTTP (a URL)
          </label>
        </fieldset>
      </div>
      {transport === "stdio" ? (
        <>
          <label>
            Command
            <input required value={command} onChange={(e) => setCommand(e.target.value)} placeholder="npx" />
          </label>
          <label>
            Arguments <span className="field-hint">one per line</span>
            <textarea rows={3} value={args} onChange={(e) => setArgs(e.target.value)} placeholder="-y" />
          </label>
          <label>
            Environment{" "}
            <span className="field-hint">KEY=value per line; a value may be {"{{secret:NAME}}"}</span>
            <textarea rows={2} value={env} onChange={(e) => setEnv(e.target.value)} />
          </label>
        </>
      ) : (
        <>
          <label>
            URL
            <input
              required
              type="url"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              placeholder="https://mcp.example.com/mcp"
            />
          </label>
          <label>
            Headers{" "}
            <span className="field-hint">
              Name=value per line, e.g. Authorization=Bearer {"{{secret:TOKEN}}"}
            </span>
            <textarea rows={2} value={headers} onChange={(e) => setHeaders(e.target.value)} />
          </label>
        </>
      )}
      <label>
        Secrets <span className="field-hint">NAME=value per line; stored, never shown again</span>
        <textarea rows={2} value={secrets} onChange={(e) => setSecrets(e.target.value)} autoComplete="off" />
      </label>
      <ErrorNote error={save.error} />
      <div className="row">
        <button type="submit" className="btn btn-primary" disabled={save.isPending}>
          {save.isPending ? (
            <>
              <span className="spinner" aria-hidden /> Connecting…
            </>
          ) : (
            "Add server"
          )}
        </button>
      </div>
    </form>
  );
}

/** Paste a standard { "mcpServers": { ... } } file (Claude Desktop, Cursor, Claude Code). */
export function ImportForm({ onDone }: { onDone: (message: string) => void }) {
  const trpc = useTRPC();
  const [json, setJson] = useState("");
  const run = useMutation(
    trpc.mcpServers.import.mutationOptions({
      onSuccess: (rows) =>
        onDone(
          rows
            .map(
              (r) =>
                `${r.created ? "added" : "replaced"} ${r.name}${r.connectError ? ` (not reachable: ${r.connectError})` : ""}`,
            )
            .join("; "),
        ),
    }),
  );
  return (
    <form
      className="stack"
      aria-label="Import MCP servers"
      onSubmit={(e) => {
        e.preventDefault();
        run.mutate({ json });
      }}
    >
      <h2>Import a client config</h2>
      <label>
        mcpServers JSON{" "}
        <span className="field-hint">the file Claude Desktop, Cursor or Claude Code write</span>
        <textarea
          rows={8}
          className="mono"
          value={json}
          onChange={(e) => setJson(e.target.value)}
          placeholder={
            '{ "mcpServers": { "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] } } }'
          }
        />
      </label>
      <ErrorNote error={run.error} />
      <div className="row">
        <button type="submit" className="btn btn-primary" disabled={run.isPending || json.trim().length < 2}>
          {run.isPending ? "Importing…" : "Import"}
        </button>
      </div>
    </form>
  );
}
