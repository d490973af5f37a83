"use client";
/** The API keys page: the keys, creating one (shown once, with snippets), revoking. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { MODES, type Mode } from "@/server/core/capabilities/types";
import { CopyButton } from "../../_components/copy-button";
import { DataTable } from "../../_components/data-table";
import { EmptyState } from "../../_components/empty-state";
import { ErrorNote } from "../../_components/error-note";
import { RelativeTime } from "../../_components/relative-time";
import { TextField } from "../../_components/text-field";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";
import { Snippets } from "./client-snippets";

const MODE_HELP: Record<Mode, string> = {
  plan: "reads only; everything else is blocked",
  default: "reads run; write, execute and external ask a human",
  auto: "everything runs without asking (deny rules still apply)",
};
const PLACEHOLDER = "<your key>";

type FreshKey = RouterOutputs["apiKeys"]["create"];

export function KeysAdmin({ publicUrl, projectDir }: { publicUrl: string | null; projectDir: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const keys = useQuery(trpc.apiKeys.list.queryOptions());
  const invalidate = () => qc.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() });
  const revoke = useMutation(trpc.apiKeys.revoke.mutationOptions({ onSuccess: invalidate }));
  const [fresh, setFresh] = useState<FreshKey | null>(null);
  const [origin, setOrigin] = useState(publicUrl ?? "");
  useEffect(() => {
    if (!publicUrl) setOrigin(window.location.origin);
  }, [publicUrl]);

  const list = keys.data ?? [];
  const active = list.filter((k) => !k.revokedAt).length;

  return (
    <div className="stack">
      {fresh && (
        <FreshKeyCard fresh={fresh} origin={origin} projectDir={projectDir} onDone={() => setFresh(null)} />
      )}
      <div className="split">
        <section className="card" aria-labelledby="keys-h">
          <h2 id="keys-h">
            Keys <span className="muted small">{active} active</span>
          </h2>
          <ErrorNote error={keys.error ?? revoke.error} />
          {keys.isPending ? (
            <p className="muted">Loading keys…</p>
          ) : list.length === 0 ? (
            <EmptyState title="No API keys yet">
              Create one on the right, then paste the snippet below into your MCP client.
            </EmptyState>
          ) : (
            <KeysTable
              keys={list}
              revoking={revoke.isPending}
              onRevoke={(id, done) => revoke.mutate({ id }, { onSettled: done })}
            />
          )}
        </section>
        <CreateKey
          onCreated={(created) => {
            setFresh(created);
            void invalidate();
          }}
        />
      </div>
      <section className="card" aria-labelledby="connect-h">
        <h2 id="connect-h">Connect an MCP client</h2>
        <p className="muted small" style={{ marginTop: 0 }}>
          The key is shown once, when you create it. Replace <code>{PLACEHOLDER}</code> with it.
        </p>
        <Snippets apiKey={fresh?.key ?? PLACEHOLDER} origin={origin} projectDir={projectDir} />
      </section>
    </div>
  );
}

type KeyRow = RouterOutputs["apiKeys"]["list"][number];

/** The keys, newest first; revoking asks once more in place. */
function KeysTable({
  keys,
  revoking,
  onRevoke,
}: {
  keys: KeyRow[];
  revoking: boolean;
  onRevoke: (id: string, done: () => void) => void;
}) {
  const [confirm, setConfirm] = useState<string | null>(null);
  return (
    <DataTable
      rows={keys}
      rowKey={(k) => k.id}
      rowProps={(k) => ({
        className: k.revokedAt ? "rule-off" : undefined,
        "data-testid": `key-${k.name}`,
      })}
      columns={[
        {
          label: "Name",
          cell: (k) => (
            <>
              <strong>{k.name}</strong>
              <div className="small muted">
                <code>{k.prefix}…</code> · {k.owner} · created <RelativeTime value={k.createdAt} />
              </div>
            </>
          ),
        },
        {
          label: "Mode",
          cell: (k) => (
            <>
              <span className="pill">{k.mode}</span>
            </>
          ),
        },
        {
          label: "Modules",
          cell: (k) => (
            <>
              {k.modules.includes("*") ? (
                <span className="muted">all modules</span>
              ) : (
                <span className="row" style={{ gap: 4 }}>
                  {k.modules.map((m) => (
                    <code key={m}>{m}</code>
                  ))}
                </span>
              )}
            </>
          ),
        },
        {
          label: "Used",
          className: "small",
          cell: (k) => (
            <>
              <RelativeTime value={k.lastUsedAt} />
            </>
          ),
        },
        {
          label: "Actions",
          hideLabel: true,
          className: "actions",
          cell: (k) => (
            <>
              {k.revokedAt ? (
                <span className="pill pill-bad">
                  revoked <RelativeTime value={k.revokedAt} />
                </span>
              ) : confirm === k.id ? (
                <span className="row" style={{ justifyContent: "flex-end" }}>
                  <button
                    type="button"
                    className="btn btn-sm btn-danger"
                    autoFocus
                    disabled={revoking}
                    onClick={() => onRevoke(k.id, () => setConfirm(null))}
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
                  aria-label={`Revoke ${k.name}`}
                  onClick={() => setConfirm(k.id)}
                >
                  Revoke
                </button>
              )}
            </>
          ),
        },
      ]}
    />
  );
}

function FreshKeyCard({
  fresh,
  origin,
  projectDir,
  onDone,
}: {
  fresh: FreshKey;
  origin: string;
  projectDir: string;
  onDone: () => void;
}) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <section className="card once" aria-labelledby="fresh-h" ref={ref} tabIndex={-1} data-testid="fresh-key">
      <h2 id="fresh-h">Key “{fresh.name}” created — copy it now</h2>
      <p className="small" style={{ margin: 0 }}>
        This is the only time the key is shown. ToolStore keeps only its hash.
      </p>
      <div className="key-value">
        <code data-testid="new-key">{fresh.key}</code>
        <CopyButton text={fresh.key} label="Copy key" className="btn btn-primary" />
      </div>
      <Snippets apiKey={fresh.key} origin={origin} projectDir={projectDir} compact />
      <button type="button" className="btn" onClick={onDone}>
        I have copied it — hide the key
      </button>
    </section>
  );
}

function CreateKey({ onCreated }: { onCreated: (key: FreshKey) => void }) {
  const trpc = useTRPC();
  const modules = useQuery(trpc.capabilities.modules.queryOptions());
  const [name, setName] = useState("");
  const [mode, setMode] = useState<Mode>("default");
  const [all, setAll] = useState(true);
  const [picked, setPicked] = useState<string[]>([]);
  const create = useMutation(
    trpc.apiKeys.create.mutationOptions({
      onSuccess: (created) => {
        onCreated(created);
        setName("");
        setPicked([]);
        setAll(true);
      },
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate({ name, mode, modules: all ? ["*"] : picked });
  }
  return (
    <section className="card" aria-labelledby="create-key-h">
      <h2 id="create-key-h">Create a key</h2>
      <form className="stack" onSubmit={submit}>
        <TextField
          label="Name"
          hint="who or what uses it"
          value={name}
          onChange={setName}
          placeholder="laptop-claude"
          required
          maxLength={60}
        />
        <label>
          Mode
          <select
            value={mode}
            onChange={(e) => setMode(e.target.value as Mode)}
            aria-describedby="key-mode-help"
          >
            {MODES.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
          <span className="field-hint" id="key-mode-help">
            {MODE_HELP[mode]}
          </span>
        </label>
        <fieldset className="box">
          <legend>Mounted modules</legend>
          <div className="stack" style={{ gap: 6 }}>
            <label className="check">
              <input type="radio" name="mount" checked={all} onChange={() => setAll(true)} />
              All modules, including ones published later
            </label>
            <label className="check">
              <input type="radio" name="mount" checked={!all} onChange={() => setAll(false)} />
              Only these:
            </label>
            <fieldset
              className="checks"
              disabled={all}
              aria-label="Modules to mount"
              style={{ paddingLeft: 22 }}
            >
              {(modules.data ?? []).map((m) => (
                <label key={m.name}>
                  <input
                    type="checkbox"
                    checked={picked.includes(m.name)}
                    onChange={(e) =>
                      setPicked(e.target.checked ? [...picked, m.name] : picked.filter((x) => x !== m.name))
                    }
                  />
                  <code>{m.name}</code>
                </label>
              ))}
              {modules.data?.length === 0 && <span className="muted small">No modules yet.</span>}
            </fieldset>
          </div>
        </fieldset>
        <ErrorNote error={create.error ?? modules.error} />
        <div>
          <button
            className="btn btn-primary"
            type="submit"
            disabled={create.isPending || (!all && picked.length === 0)}
          >
            Create key
          </button>
        </div>
      </form>
    </section>
  );
}
