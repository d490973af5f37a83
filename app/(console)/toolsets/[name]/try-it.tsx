"use client";
/** Try it: call one binding of a toolset through the gate from the console, and see what came back. */
import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { type FormEvent, type ReactNode, useState } from "react";
import type { Mode } from "@/server/core/capabilities/types";
import { CategoryBadge } from "../../../_components/category-badge";
import { ModeSelect } from "../../../_components/mode-select";
import { useTRPC } from "../../../_lib/trpc";
import type { Schema } from "./schema-form";
import { TryArgs, useTryArgs } from "./try-args";
import { TryResponse } from "./try-response";
import { useApprovalWaiting } from "./use-approval-waiting";

interface Binding {
  name: string;
  description: string;
  signature: string;
  category: string;
  inputSchema: Schema;
}

/** The binding to call, with its signature, category and description; `children` sit beside it. */
function BindingPicker({
  bindings,
  value,
  onPick,
  children,
}: {
  bindings: Binding[];
  value: string;
  onPick: (name: string) => void;
  children: ReactNode;
}) {
  const binding = bindings.find((b) => b.name === value);
  return (
    <>
      <div className="form-row" style={{ gridTemplateColumns: "minmax(0, 1fr) 150px" }}>
        <label>
          Binding
          <select value={value} onChange={(e) => onPick(e.target.value)}>
            {bindings.map((b) => (
              <option key={b.name} value={b.name}>
                {b.name} ({b.category})
              </option>
            ))}
          </select>
        </label>
        {children}
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
    </>
  );
}

function RunButton({ running, disabled }: { running: boolean; disabled: boolean }) {
  return (
    <button type="submit" className="btn btn-primary" disabled={disabled}>
      {running ? (
        <>
          <span className="spinner" aria-hidden /> Running…
        </>
      ) : (
        <>
          Run <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
        </>
      )}
    </button>
  );
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
  const editor = useTryArgs(binding?.inputSchema ?? null);
  const { args, jsonError } = editor;
  const run = useMutation(trpc.toolsets.tryIt.mutationOptions());
  const effectiveMode = mode ?? defaultMode.data ?? "default";
  const capability = `${toolset}.${bindingName}`;

  const waiting = useApprovalWaiting({ enabled: canRun, running: run.isPending, sessionId, capability });

  function pick(name: string) {
    setBindingName(name);
    editor.reset(bindings.find((b) => b.name === name)?.inputSchema ?? null);
    run.reset();
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
          <BindingPicker bindings={bindings} value={bindingName} onPick={pick}>
            <ModeSelect value={effectiveMode} onChange={setMode} />
          </BindingPicker>
          <TryArgs
            toolset={toolset}
            binding={bindingName}
            schema={binding?.inputSchema ?? null}
            state={editor}
          />
          <div className="row">
            <RunButton running={run.isPending} disabled={!canRun || run.isPending || !!jsonError} />
            {!canRun && <span className="field-hint">Running needs the approver role.</span>}
          </div>
        </form>
      </section>
      <TryResponse
        capability={capability}
        args={args}
        pending={run.isPending}
        waiting={run.isPending ? waiting : null}
        result={run.data}
        error={run.error}
      />
    </div>
  );
}
