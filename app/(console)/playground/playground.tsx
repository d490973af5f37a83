"use client";
/** The Playground: write an action, run it through the gate, watch its calls and read its output. */
import { useMutation, useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import Link from "next/link";
import { useCallback, useEffect, useRef, useState } from "react";
import { ErrorNote } from "@/app/_components/error-note";
import { useTRPC } from "@/app/_lib/trpc";
import type { ObservationEnvelope } from "@/server/core/actions/envelope";
import { MODES, type Mode } from "@/server/core/capabilities/types";
import { OutputPanes } from "../_run/output-panes";
import { Timeline, type TimelinePane } from "../_run/timeline";
import { UiPane } from "../_run/ui-pane";
import { useUiClient } from "../_run/use-ui-client";
import type { CodeEditorHandle } from "./code-editor";
import { EXAMPLES } from "./examples";
import { ModuleList } from "./module-list";
import { PlanCard } from "./plan-card";
import { type Phase, usePlaygroundRun } from "./use-playground-run";

const CodeEditor = dynamic(() => import("./code-editor"), {
  ssr: false,
  loading: () => <div className="editor-loading muted">Loading the editor…</div>,
});

const MODE_LABEL: Record<Mode, string> = {
  plan: "plan · reads only",
  default: "default · asks first",
  auto: "auto · no questions",
};

export function Playground({
  initialCode,
  initialMode,
  canRun,
}: {
  initialCode: string;
  initialMode: Mode;
  canRun: boolean;
}) {
  const trpc = useTRPC();
  const editor = useRef<CodeEditorHandle>(null);
  const code = useRef(initialCode);
  const [mode, setMode] = useState<Mode>(initialMode);
  const modules = useQuery(trpc.playground.modules.queryOptions(undefined, { staleTime: 30_000 }));
  const save = useMutation(trpc.playground.save.mutationOptions());
  const currentCode = useCallback(() => editor.current?.getValue() ?? code.current, []);
  const ui = useUiClient();
  const action = usePlaygroundRun({
    canRun,
    mode,
    code: currentCode,
    clientId: ui.clientId,
    onStart: ui.clear,
  });
  const { run, running, phase, target, envelope } = action;
  const panes: TimelinePane[] = ui.panes
    .filter((p) => p.prompt.runId === target?.runId)
    .map((p) => ({
      key: p.prompt.id,
      capability: p.prompt.capability,
      node: <UiPane state={p} client={ui} />,
    }));

  // Ctrl/Cmd+Enter outside the editor too (the editor binds its own).
  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (e.key !== "Enter" || !(e.ctrlKey || e.metaKey) || e.defaultPrevented) return;
      if ((e.target as HTMLElement | null)?.closest(".monaco-editor")) return;
      e.preventDefault();
      run();
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [run]);

  // Keep the last code per user (server-side), a moment after typing stops.
  const saveTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const saveSoon = useCallback(
    (nextMode: Mode) => {
      clearTimeout(saveTimer.current);
      saveTimer.current = setTimeout(() => save.mutate({ code: code.current, mode: nextMode }), 1000);
    },
    [save],
  );

  const mounted = new Set(modules.data?.modules.map((m) => m.name) ?? []);
  const waiting = action.rows.filter((r) => r.state === "waiting");

  return (
    <div className="pg">
      <PlaygroundToolbar
        canRun={canRun}
        running={running}
        onRun={run}
        onCancel={target ? action.cancel : undefined}
        cancelling={action.cancelling}
        mode={mode}
        onMode={(next) => {
          setMode(next);
          saveSoon(next);
        }}
        examples={EXAMPLES.filter((e) => e.modules.every((m) => mounted.has(m)))}
        onExample={(example) => editor.current?.replace(example.code)}
      />
      {!canRun && (
        <div className="card notice" role="note">
          You can read and edit here; running actions needs the <strong>approver</strong> role.
        </div>
      )}
      {action.startError && <ErrorNote error={action.startError} />}
      {action.cancelError && <ErrorNote error={action.cancelError} />}
      {action.planError && <ErrorNote error={action.planError} />}
      <div className="pg-panes">
        <section className="pane pane-editor" aria-label="Editor">
          <div className="pane-body editor-host">
            <CodeEditor
              defaultValue={initialCode}
              typings={modules.data?.typings}
              onRun={run}
              handleRef={editor}
              onChange={(text) => {
                code.current = text;
                saveSoon(mode);
              }}
            />
          </div>
          <ModuleList
            modules={modules.data?.modules}
            libraries={modules.data?.libraries}
            error={modules.error}
          />
        </section>
        <section className="pane" aria-labelledby="tl-h">
          <div className="pane-head">
            <h2 id="tl-h">Timeline</h2>
            <RunStatus
              phase={phase}
              startedAt={action.startedAt}
              waiting={waiting.map((w) => w.capability)}
              asking={
                panes.length > 0 &&
                ui.panes.some((p) => p.outcome === null && p.prompt.runId === target?.runId)
              }
              envelope={envelope}
            />
            <span className="spacer" />
            {target && phase === "finished" && <Link href={`/runs/${target.runId}`}>Open run</Link>}
          </div>
          {running && <div className="progress" role="progressbar" aria-label="Action running" />}
          <div className="pane-body" aria-live="polite">
            {phase === "finished" && envelope?.plan && envelope.plan.calls.length > 0 && (
              <PlanCard
                plan={envelope.plan}
                canRun={canRun}
                asking={action.planAsking}
                onAsk={() => envelope.plan && action.runPlan(envelope.plan.id)}
              />
            )}
            <Timeline
              rows={action.rows}
              panes={panes}
              canDecide={canRun}
              empty={<TimelineEmpty running={running} envelope={envelope} />}
            />
          </div>
        </section>
        <section className="pane" aria-label="Output">
          <OutputPanes envelope={envelope} running={running} idPrefix="pg" />
        </section>
      </div>
    </div>
  );
}

type Example = (typeof EXAMPLES)[number];

function PlaygroundToolbar({
  canRun,
  running,
  onRun,
  onCancel,
  cancelling,
  mode,
  onMode,
  examples,
  onExample,
}: {
  canRun: boolean;
  running: boolean;
  onRun: () => void;
  /** Set once the run has an id to cancel. */
  onCancel: (() => void) | undefined;
  cancelling: boolean;
  mode: Mode;
  onMode: (mode: Mode) => void;
  /** The examples whose modules are mounted. */
  examples: Example[];
  onExample: (example: Example) => void;
}) {
  return (
    <div className="pg-toolbar" role="toolbar" aria-label="Playground">
      <h1 className="pg-title">Playground</h1>
      <button
        type="button"
        className="btn btn-primary"
        onClick={onRun}
        disabled={!canRun || running}
        aria-keyshortcuts="Control+Enter Meta+Enter"
      >
        {running ? "Running…" : "Run"} <kbd aria-hidden>Ctrl+Enter</kbd>
      </button>
      {running && onCancel && (
        <button type="button" className="btn" onClick={onCancel} disabled={cancelling}>
          Cancel
        </button>
      )}
      <label className="inline-field">
        <span>Mode</span>
        <select aria-label="Mode" value={mode} onChange={(e) => onMode(e.target.value as Mode)}>
          {MODES.map((m) => (
            <option key={m} value={m}>
              {MODE_LABEL[m]}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-field">
        <span className="visually-hidden">Examples</span>
        <select
          aria-label="Examples"
          value=""
          onChange={(e) => {
            const example = EXAMPLES.find((x) => x.id === e.target.value);
            if (example) onExample(example);
          }}
        >
          <option value="">Examples…</option>
          {examples.map((e) => (
            <option key={e.id} value={e.id}>
              {e.title}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

/** What the timeline says while it has no rows: running, refused, no calls, or not run yet. */
function TimelineEmpty({ running, envelope }: { running: boolean; envelope: ObservationEnvelope | null }) {
  if (running) return "Running… capability calls appear here as the gate decides them.";
  if (envelope?.error?.kind === "refused")
    return (
      <div className="tl-refusal" data-testid="timeline-refusal">
        <strong>Refused before it ran</strong>
        <span className="mono">{envelope.error.message}</span>
        <span>Fix the imports and press Run again; nothing was called.</span>
      </div>
    );
  if (envelope)
    return (
      <>
        <strong>No capability calls</strong>
        This action called no capability
        {envelope.error ? ` (it ended with ${envelope.error.kind}: see Error)` : ""}.
      </>
    );
  return (
    <>
      <strong>No calls yet</strong>
      Press Run (Ctrl+Enter). Each capability call appears here with its gate decision; calls that need a
      human can be answered inline.
    </>
  );
}

function RunStatus({
  phase,
  startedAt,
  waiting,
  asking,
  envelope,
}: {
  phase: Phase;
  startedAt: number | null;
  waiting: string[];
  /** A toolstore/ui question of this run waits for this tab's answer. */
  asking: boolean;
  envelope: ObservationEnvelope | null;
}) {
  const [now, setNow] = useState(() => Date.now());
  const live = phase === "starting" || phase === "running";
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => setNow(Date.now()), 200);
    return () => clearInterval(t);
  }, [live]);
  let text: React.ReactNode = null;
  if (live && startedAt) {
    const secs = ((now - startedAt) / 1000).toFixed(1);
    text = asking ? (
      <span className="pill pill-wait">
        <span className="pulse" aria-hidden />
        waiting for your answer · {secs} s
      </span>
    ) : waiting.length ? (
      <span className="pill pill-wait">
        <span className="pulse" aria-hidden />
        waiting for approval: {waiting.join(", ")} · {secs} s
      </span>
    ) : (
      <span className="pill">
        <span className="spinner" aria-hidden /> running · {secs} s
      </span>
    );
  } else if (phase === "finished" && envelope) {
    text = envelope.ok ? (
      <span className="pill pill-ok">ok · {envelope.durationMs} ms</span>
    ) : (
      <span className="pill pill-bad">
        {envelope.error?.kind ?? "error"} · {envelope.durationMs} ms
      </span>
    );
  }
  return (
    <span className="pg-status" role="status" data-testid="run-status">
      {text}
    </span>
  );
}
