"use client";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import Link from "next/link";
import { type FormEvent, useEffect, useRef, useState } from "react";
import type { Mode } from "@/server/core/capabilities/types";
import { CategoryBadge } from "../../../_components/category-badge";
import { CopyButton } from "../../../_components/copy-button";
import { ErrorNote } from "../../../_components/error-note";
import { JsonView } from "../../../_components/json-view";
import { ModeSelect } from "../../../_components/mode-select";
import { TabPanel, Tabs } from "../../../_components/tabs";
import { useTRPC } from "../../../_lib/trpc";
import { initialArgs, type Schema, SchemaForm } from "./schema-form";

interface Binding {
  name: string;
  description: string;
  signature: string;
  category: string;
  inputSchema: Schema;
}

interface Waiting {
  approvalId: string;
  expiresAt: number;
}

export function TryIt({
  toolset,
  bindings,
  initial,
  canRun,
  sessionId,
}: {
  toolset: string;
  bindings: Binding[];
  initial: string | null;
  canRun: boolean;
  sessionId: string;
}) {
  const trpc = useTRPC();
  const defaultMode = useQuery(trpc.rules.defaultMode.queryOptions());
  const [bindingName, setBindingName] = useState(initial ?? bindings[0]?.name ?? "");
  const binding = bindings.find((b) => b.name === bindingName);
  const [mode, setMode] = useState<Mode | null>(null);
  const [view, setView] = useState<"form" | "json">("form");
  const [args, setArgs] = useState<Record<string, unknown>>(() =>
    binding ? initialArgs(binding.inputSchema) : {},
  );
  const [jsonText, setJsonText] = useState(() => JSON.stringify(args, null, 2));
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [formKey, setFormKey] = useState(0);
  const [waiting, setWaiting] = useState<Waiting | null>(null);
  const run = useMutation(trpc.toolsets.tryIt.mutationOptions({ onSettled: () => setWaiting(null) }));
  const effectiveMode = mode ?? defaultMode.data ?? "default";
  const capability = `${toolset}.${bindingName}`;

  // While the call runs, show when it waits for a human (same console session, same capability).
  // The stream stays open on this tab, so a request made right after Run is not missed.
  const pending = useRef(false);
  pending.current = run.isPending;
  useSubscription(
    trpc.events.live.subscriptionOptions(
      { types: ["approval.requested"] },
      {
        enabled: canRun,
        onData: (tracked) => {
          if (!pending.current) return;
          const approval = (tracked.data.payload as { approval?: Record<string, unknown> }).approval;
          if (approval?.sessionId === sessionId && approval.capability === capability) {
            setWaiting({ approvalId: String(approval.id), expiresAt: Number(approval.expiresAt) });
          }
        },
      },
    ),
  );

  function pick(name: string) {
    const next = bindings.find((b) => b.name === name);
    setBindingName(name);
    const fresh = next ? initialArgs(next.inputSchema) : {};
    setArgs(fresh);
    setJsonText(JSON.stringify(fresh, null, 2));
    setJsonError(null);
    setFormKey((k) => k + 1);
    run.reset();
  }

  function switchView(next: "form" | "json") {
    if (next === view) return;
    if (next === "json") setJsonText(JSON.stringify(args, null, 2));
    else if (jsonError === null) setFormKey((k) => k + 1);
    setView(next);
  }

  function submit(e?: FormEvent) {
    e?.preventDefault();
    if (!binding || run.isPending || !canRun || jsonError) return;
    run.mutate({ toolset, binding: binding.name, args, mode: effectiveMode });
  }

  if (bindings.length === 0) {
    return (
      <div className="card empty">
        <strong>Nothing to try</strong>
        This version has no bindings.
      </div>
    );
  }

  const result = run.data;
  return (
    <div className="split-even">
      <section className="card" aria-labelledby="try-h">
        <h2 id="try-h">Try a binding</h2>
        <p className="muted small" style={{ marginTop: 0 }}>
          The call goes through the gate like any other: in default mode a write, execute or external call
          waits for approval in <Link href="/approvals">Approvals</Link>.
        </p>
        <form
          className="stack"
          onSubmit={submit}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              submit();
            }
          }}
        >
          <div className="form-row" style={{ gridTemplateColumns: "minmax(0, 1fr) 150px" }}>
            <label>
              Binding
              <select value={bindingName} onChange={(e) => pick(e.target.value)}>
                {bindings.map((b) => (
                  <option key={b.name} value={b.name}>
                    {b.name} ({b.category})
                  </option>
                ))}
              </select>
            </label>
            <ModeSelect value={effectiveMode} onChange={setMode} />
          </div>
          {binding && (
            <div className="small">
              <code>{binding.signature}</code> <CategoryBadge category={binding.category} />
              {binding.description && (
                <div className="muted clamp-2" title={binding.description}>
                  {binding.description}
                </div>
              )}
            </div>
          )}
          <Tabs
            label="Arguments editor"
            idPrefix={`try-${toolset}`}
            selected={view}
            onSelect={switchView}
            style={{ marginBottom: 0 }}
            tabs={[
              { id: "form", label: "Form" },
              { id: "json", label: "JSON" },
            ]}
          />
          <TabPanel idPrefix={`try-${toolset}`} selected={view}>
            {binding && view === "form" ? (
              <SchemaForm
                key={`${bindingName}-${formKey}`}
                schema={binding.inputSchema}
                value={args}
                onChange={setArgs}
                idPrefix={`arg-${bindingName}`}
              />
            ) : (
              <label>
                Arguments (JSON)
                <textarea
                  rows={10}
                  value={jsonText}
                  spellCheck={false}
                  aria-invalid={jsonError !== null}
                  onChange={(e) => {
                    setJsonText(e.target.value);
                    try {
                      const parsed = JSON.parse(e.target.value) as unknown;
                      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
                        setJsonError("the arguments are one JSON object");
                        return;
                      }
                      setArgs(parsed as Record<string, unknown>);
                      setJsonError(null);
                    } catch (error) {
                      setJsonError((error as Error).message);
                    }
                  }}
                />
                {jsonError && (
                  <span className="field-hint" style={{ color: "var(--danger)" }}>
                    {jsonError}
                  </span>
                )}
              </label>
            )}
          </TabPanel>
          <div className="row">
            <button
              type="submit"
              className="btn btn-primary"
              disabled={!canRun || run.isPending || !!jsonError}
            >
              {run.isPending ? (
                <>
                  <span className="spinner" aria-hidden /> Running…
                </>
              ) : (
                <>
                  Run <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
                </>
              )}
            </button>
            {!canRun && <span className="field-hint">Running needs the approver role.</span>}
          </div>
        </form>
      </section>
      <section className="card" aria-labelledby="try-result-h" aria-live="polite">
        <h2 id="try-result-h">Request and response</h2>
        <h3>Request</h3>
        <div className="snippet">
          <pre>{`${capability}(${JSON.stringify(args, null, 2)})`}</pre>
          <CopyButton text={JSON.stringify(args)} label="Copy args" />
        </div>
        <h3>Response</h3>
        <ErrorNote error={run.error} />
        {run.isPending && (
          <div className="decision" data-testid="try-waiting">
            <span className="spinner" aria-hidden />
            {waiting ? (
              <div>
                <div className="decision-reason">Waiting for approval</div>
                <div className="small muted">
                  Approve or deny it in <Link href="/approvals">Approvals</Link>
                  {" · "}
                  <Expiry at={waiting.expiresAt} />
                </div>
              </div>
            ) : (
              <div className="decision-reason">Calling {capability}…</div>
            )}
          </div>
        )}
        {!run.isPending && !result && !run.error && (
          <p className="muted small">
            Fill in the arguments and press Run. The gate's decision and the result appear here.
          </p>
        )}
        {result && !run.isPending && (
          <div className="stack" data-testid="try-result">
            <div className="decision">
              <span className={`effect effect-${result.decision ?? (result.ok ? "allow" : "deny")}`}>
                {result.decision ?? (result.ok ? "ok" : "error")}
              </span>
              <div>
                <div className="decision-reason">
                  {result.ok ? "Returned" : <code>{result.error?.code}</code>}{" "}
                  {result.ok ? `in ${result.ms} ms` : result.error?.message}
                </div>
                {result.reason && <div className="small muted">gate: {result.reason}</div>}
              </div>
            </div>
            {result.ok && (
              <div className="result-box">
                <JsonView value={result.value} label="Result" />
              </div>
            )}
          </div>
        )}
      </section>
    </div>
  );
}

function Expiry({ at }: { at: number }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const left = Math.max(0, Math.round((at - now) / 1000));
  return (
    <span>
      expires in {Math.floor(left / 60)}:{String(left % 60).padStart(2, "0")}
    </span>
  );
}
