"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { DataTable } from "../../../_components/data-table";
import { ErrorNote } from "../../../_components/error-note";
import { RelativeTime } from "../../../_components/relative-time";
import { type RouterOutputs, useTRPC } from "../../../_lib/trpc";

type EnvVar = RouterOutputs["toolsets"]["get"]["env"][number];

export function ToolsetSettings({
  name,
  timeoutMs,
  allowedHosts,
  declared,
  env,
  canEdit,
}: {
  name: string;
  timeoutMs: number;
  allowedHosts: string[];
  declared: { hosts: string[]; timeoutMs: number | null };
  env: EnvVar[];
  canEdit: boolean;
}) {
  return (
    <div className="split" style={{ gridTemplateColumns: "minmax(0, 1.3fr) minmax(280px, 1fr)" }}>
      <EnvCard name={name} env={env} canEdit={canEdit} />
      <LimitsCard
        name={name}
        timeoutMs={timeoutMs}
        allowedHosts={allowedHosts}
        declared={declared}
        canEdit={canEdit}
      />
    </div>
  );
}

function useInvalidate() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  return () => qc.invalidateQueries({ queryKey: trpc.toolsets.pathKey() });
}

function EnvCard({ name, env, canEdit }: { name: string; env: EnvVar[]; canEdit: boolean }) {
  const trpc = useTRPC();
  const invalidate = useInvalidate();
  const unset = useMutation(trpc.toolsets.unsetEnv.mutationOptions({ onSuccess: invalidate }));
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <section className="card" aria-labelledby="env-h">
      <h2 id="env-h">Environment variables and secrets</h2>
      <p className="muted small" style={{ marginTop: 0 }}>
        Injected into the toolset at call time, never shown to the agent. A secret is write-only: its value is
        never sent back to the browser.
      </p>
      <ErrorNote error={unset.error} />
      {env.length === 0 ? (
        <div className="empty">
          <strong>No variables</strong>
          The code declares none (<code>@env NAME</code> or <code>@secret NAME</code> in its header).
          {canEdit ? " You can still add one below." : ""}
        </div>
      ) : (
        <DataTable
          rows={env}
          rowKey={(v) => v.name}
          rowProps={(v) => ({ "data-testid": `env-${v.name}` })}
          columns={[
            {
              label: "Name",
              cell: (v) => (
                <>
                  <code>{v.name}</code> {v.secret && <span className="pill">secret</span>}
                  {!v.declared && <span className="pill">not declared</span>}
                  {v.description && <div className="small muted">{v.description}</div>}
                </>
              ),
            },
            {
              label: "Value",
              cell: (v) => (
                <>
                  {editing === v.name ? (
                    <EnvEditor
                      toolset={name}
                      variable={v}
                      onDone={() => {
                        setEditing(null);
                        void invalidate();
                      }}
                      onCancel={() => setEditing(null)}
                    />
                  ) : v.set ? (
                    <>
                      <code>{v.display}</code>
                      {v.updatedAt && (
                        <div className="small muted">
                          set <RelativeTime value={v.updatedAt} />
                        </div>
                      )}
                    </>
                  ) : (
                    <span className="pill pill-wait">not set</span>
                  )}
                </>
              ),
            },
            {
              label: "Actions",
              hideLabel: true,
              className: "actions",
              cell: (v) => (
                <>
                  {canEdit && editing !== v.name && (
                    <>
                      <button
                        type="button"
                        className="btn btn-sm"
                        aria-label={`${v.set ? "Change" : "Set"} ${v.name}`}
                        onClick={() => setEditing(v.name)}
                      >
                        {v.set ? "Change" : "Set"}
                      </button>
                      {v.set && (
                        <button
                          type="button"
                          className="btn btn-sm btn-danger"
                          aria-label={`Unset ${v.name}`}
                          onClick={() => unset.mutate({ toolset: name, name: v.name })}
                        >
                          Unset
                        </button>
                      )}
                    </>
                  )}
                </>
              ),
            },
          ]}
        />
      )}
      {canEdit && <AddVariable toolset={name} onDone={() => void invalidate()} />}
    </section>
  );
}

function EnvEditor({
  toolset,
  variable,
  onDone,
  onCancel,
}: {
  toolset: string;
  variable: EnvVar;
  onDone: () => void;
  onCancel: () => void;
}) {
  const trpc = useTRPC();
  const set = useMutation(trpc.toolsets.setEnv.mutationOptions({ onSuccess: onDone }));
  // A secret's current value never reaches the browser, so its field starts empty.
  const [value, setValue] = useState(variable.secret ? "" : (variable.value ?? ""));
  function submit(e: FormEvent) {
    e.preventDefault();
    set.mutate({ toolset, name: variable.name, value, secret: variable.secret });
  }
  return (
    <form
      className="stack"
      style={{ gap: 6 }}
      onSubmit={submit}
      onKeyDown={(e) => e.key === "Escape" && onCancel()}
    >
      <label>
        <span className="visually-hidden">New value of {variable.name}</span>
        <input
          type={variable.secret ? "password" : "text"}
          autoComplete="off"
          value={value}
          onChange={(e) => setValue(e.target.value)}
          placeholder={variable.secret ? "enter a new secret value" : ""}
          autoFocus
          spellCheck={false}
        />
      </label>
      <div className="row">
        <button className="btn btn-sm btn-primary" type="submit" disabled={set.isPending}>
          Save
        </button>
        <button className="btn btn-sm" type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <ErrorNote error={set.error} />
    </form>
  );
}

function AddVariable({ toolset, onDone }: { toolset: string; onDone: () => void }) {
  const trpc = useTRPC();
  const [form, setForm] = useState({ name: "", value: "", secret: false });
  const set = useMutation(
    trpc.toolsets.setEnv.mutationOptions({
      onSuccess: () => {
        setForm({ name: "", value: "", secret: false });
        onDone();
      },
    }),
  );
  return (
    <form
      className="inline-form"
      style={{ marginTop: 12 }}
      onSubmit={(e) => {
        e.preventDefault();
        set.mutate({ toolset, ...form });
      }}
      aria-label="Add a variable"
    >
      <label>
        Variable name
        <input
          value={form.name}
          onChange={(e) => setForm({ ...form, name: e.target.value.toUpperCase() })}
          placeholder="API_TOKEN"
          required
          spellCheck={false}
        />
      </label>
      <label className="grow">
        Value
        <input
          type={form.secret ? "password" : "text"}
          autoComplete="off"
          value={form.value}
          onChange={(e) => setForm({ ...form, value: e.target.value })}
          spellCheck={false}
        />
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={form.secret}
          onChange={(e) => setForm({ ...form, secret: e.target.checked })}
        />
        Secret
      </label>
      <button className="btn" type="submit" disabled={set.isPending}>
        Add variable
      </button>
      <ErrorNote error={set.error} />
    </form>
  );
}

function LimitsCard({
  name,
  timeoutMs,
  allowedHosts,
  declared,
  canEdit,
}: {
  name: string;
  timeoutMs: number;
  allowedHosts: string[];
  declared: { hosts: string[]; timeoutMs: number | null };
  canEdit: boolean;
}) {
  const trpc = useTRPC();
  const invalidate = useInvalidate();
  const [timeout, setTimeoutText] = useState(String(timeoutMs));
  const [hosts, setHosts] = useState(allowedHosts.join("\n"));
  const save = useMutation(trpc.toolsets.updateSettings.mutationOptions({ onSuccess: invalidate }));
  function submit(e: FormEvent) {
    e.preventDefault();
    save.mutate({
      name,
      timeoutMs: Number(timeout),
      allowedHosts: hosts
        .split(/[\n,]/)
        .map((h) => h.trim())
        .filter(Boolean),
    });
  }
  return (
    <section className="card" aria-labelledby="limits-h">
      <h2 id="limits-h">Timeout and allowed hosts</h2>
      <form className="stack" onSubmit={submit}>
        <fieldset disabled={!canEdit} className="stack" style={{ border: 0, padding: 0, margin: 0 }}>
          <label>
            Timeout per call (ms){" "}
            <span className="field-hint">
              {declared.timeoutMs ? `the code declares ${declared.timeoutMs}` : "the code declares none"}
            </span>
            <input
              type="number"
              min={100}
              max={300000}
              step={1}
              value={timeout}
              onChange={(e) => setTimeoutText(e.target.value)}
              required
            />
          </label>
          <label>
            Allowed hosts{" "}
            <span className="field-hint">one per line; the toolset's fetch reaches only these</span>
            <textarea
              rows={5}
              value={hosts}
              onChange={(e) => setHosts(e.target.value)}
              placeholder={"api.example.com\n*.example.org\nlocalhost:8080"}
              spellCheck={false}
            />
          </label>
          {declared.hosts.length > 0 && (
            <p className="field-hint" style={{ margin: 0 }}>
              Declared in the code: {declared.hosts.join(", ")}
            </p>
          )}
        </fieldset>
        <ErrorNote error={save.error} />
        {save.isSuccess && (
          <p className="small pill-ok" role="status" style={{ margin: 0 }}>
            Saved.
          </p>
        )}
        {canEdit ? (
          <div>
            <button className="btn btn-primary" type="submit" disabled={save.isPending}>
              Save limits
            </button>
          </div>
        ) : (
          <p className="field-hint">Only an admin changes limits.</p>
        )}
      </form>
    </section>
  );
}
