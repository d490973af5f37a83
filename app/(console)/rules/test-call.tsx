"use client";
/** Test a call: what the gate would decide for a sample call, step by step, without running it. */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useMemo, useState } from "react";
import type { Mode } from "@/server/core/capabilities/types";
import { CategoryBadge } from "../../_components/category-badge";
import { DataTable } from "../../_components/data-table";
import { EmptyState } from "../../_components/empty-state";
import { ErrorNote } from "../../_components/error-note";
import { ModeSelect } from "../../_components/mode-select";
import { sampleArgs } from "../../_components/schema-sample";
import { groupByModule } from "../../_lib/group-by-module";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";

interface Submitted {
  capability: string;
  argsJson: string;
  mode: Mode;
  withSessionGrant: boolean;
}

const STEP_LABELS = [
  "Deny rules",
  "Plan mode blocks all but read",
  "Ask rules",
  "Allow rules",
  "Mode × category table",
  "Session grant (“allow for session”)",
] as const;

export function TestCall() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const caps = useQuery(trpc.capabilities.list.queryOptions());
  const defaultMode = useQuery(trpc.rules.defaultMode.queryOptions());
  const [capability, setCapability] = useState("");
  const [argsJson, setArgsJson] = useState("{}");
  const [mode, setMode] = useState<Mode | null>(null);
  const [grant, setGrant] = useState(false);
  const [submitted, setSubmitted] = useState<Submitted | null>(null);
  // The sample arguments of a newly chosen capability never overwrite what the user typed.
  const [edited, setEdited] = useState(false);
  const effectiveMode = mode ?? defaultMode.data ?? "default";

  const modules = useMemo(() => groupByModule(caps.data ?? []), [caps.data]);

  const schema = useQuery({
    ...trpc.capabilities.schema.queryOptions({ name: capability }),
    enabled: capability !== "",
  });
  useEffect(() => {
    if (schema.data && !edited) setArgsJson(JSON.stringify(sampleArgs(schema.data), null, 2));
  }, [schema.data, edited]);

  const result = useQuery({
    ...trpc.rules.testCall.queryOptions(
      submitted ?? { capability: "", argsJson: "{}", mode: "default", withSessionGrant: false },
    ),
    enabled: submitted !== null,
    retry: false,
  });

  function submit(e?: FormEvent) {
    e?.preventDefault();
    if (!capability) return;
    const next = { capability, argsJson, mode: effectiveMode, withSessionGrant: grant };
    if (JSON.stringify(next) === JSON.stringify(submitted)) {
      void qc.invalidateQueries({ queryKey: trpc.rules.testCall.queryKey(next) });
    }
    setSubmitted(next);
  }

  return (
    <section className="card" aria-labelledby="test-h">
      <h2 id="test-h">Test a call</h2>
      <p className="muted small" style={{ marginTop: 0 }}>
        What the gate would decide for a sample call, and why. Nothing runs and nothing is recorded.
      </p>
      <div className="split-even">
        <form className="stack" onSubmit={submit} aria-label="Sample call">
          <div className="form-row" style={{ gridTemplateColumns: "minmax(0, 1fr) 150px" }}>
            <label>
              Capability
              <select
                value={capability}
                onChange={(e) => {
                  setCapability(e.target.value);
                  setEdited(false);
                }}
                required
              >
                <option value="" disabled>
                  {caps.data?.length === 0 ? "No capabilities yet" : "Choose a capability…"}
                </option>
                {modules.map(([module, names]) => (
                  <optgroup key={module} label={`toolstore/${module}`}>
                    {names.map((c) => (
                      <option key={c.name} value={c.name}>
                        {c.name}
                      </option>
                    ))}
                  </optgroup>
                ))}
              </select>
            </label>
            <ModeSelect value={effectiveMode} onChange={setMode} />
          </div>
          <label>
            Arguments (JSON) <span className="field-hint">Ctrl+Enter tests</span>
            <textarea
              rows={7}
              value={argsJson}
              spellCheck={false}
              onChange={(e) => {
                setArgsJson(e.target.value);
                setEdited(true);
              }}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit();
              }}
            />
          </label>
          <label className="check">
            <input type="checkbox" checked={grant} onChange={(e) => setGrant(e.target.checked)} />
            The session already holds an “allow for session” grant
          </label>
          <div>
            <button className="btn btn-primary" type="submit" disabled={!capability}>
              Test call
            </button>
          </div>
        </form>
        <div aria-live="polite" data-testid="test-result">
          <ErrorNote error={result.error} />
          {!submitted && (
            <EmptyState title="No call tested yet">
              Choose a capability, adjust the arguments and press Test call.
            </EmptyState>
          )}
          {result.isFetching && !result.data && <p className="muted">Evaluating…</p>}
          {result.data && <TestResult data={result.data} />}
        </div>
      </div>
    </section>
  );
}

type TestResultData = RouterOutputs["rules"]["testCall"];

/** The decision, the steps of the gate up to the one that decided, and how each rule matched. */
function TestResult({ data }: { data: TestResultData }) {
  const decidingStep = stepOf(data.evaluation);
  return (
    <div className="stack">
      <div className="decision">
        <span className={`effect effect-${data.evaluation.decision}`}>{data.evaluation.decision}</span>
        <div>
          <div className="decision-reason">{data.evaluation.reason}</div>
          <div className="small muted">
            <code>{data.capability}</code> · <CategoryBadge category={data.category} /> · {data.mode} mode
          </div>
        </div>
      </div>
      <div>
        <h3>Why</h3>
        <ol className="steps">
          {STEP_LABELS.map((label, i) => (
            <li
              key={label}
              className={i === decidingStep ? "decided" : i > decidingStep ? "skipped" : undefined}
            >
              {label}: {stepText(i, data, decidingStep)}
            </li>
          ))}
        </ol>
      </div>
      {data.rules.length > 0 && (
        <div>
          <h3>Enabled rules</h3>
          <RuleMatches rules={data.rules} />
        </div>
      )}
    </div>
  );
}

const mark = (yes: boolean, text: [string, string] = ["✓", "✗"]) => (
  <span className={yes ? "yes" : "no"}>{yes ? text[0] : text[1]}</span>
);

function RuleMatches({ rules }: { rules: TestResultData["rules"] }) {
  return (
    <DataTable
      rows={rules}
      rowKey={(r) => r.id}
      columns={[
        {
          label: "Rule",
          cell: (r) => (
            <>
              <span className={`effect effect-${r.effect}`}>{r.effect}</span> <code>{r.pattern}</code>
            </>
          ),
        },
        { label: "Name", cell: (r) => mark(r.nameMatches) },
        {
          label: "Conditions",
          cell: (r) => (
            <>
              {r.conditions.length === 0 && <span className="muted">none</span>}
              {r.conditions.map((c) => (
                <div key={`${c.path}${c.op}`} className={c.holds ? "yes" : "no"}>
                  {c.holds ? "✓" : "✗"} <code>{c.path}</code> {c.op} <code>{JSON.stringify(c.value)}</code>
                </div>
              ))}
              {r.versionMatches === false && <div className="no">✗ other code version</div>}
            </>
          ),
        },
        { label: "Matches", cell: (r) => mark(r.matches, ["yes", "no"]) },
      ]}
    />
  );
}

type Evaluation = RouterOutputs["rules"]["testCall"]["evaluation"];

function stepOf(e: Evaluation): number {
  if (e.decision === "deny") return 0;
  if (e.decision === "blocked") return 1;
  if (e.decision === "ask" && e.via === "rule") return 2;
  if (e.decision === "allow" && e.via === "rule") return 3;
  if (e.via === "grant" || e.decision === "ask") return 5;
  return 4;
}

function stepText(
  step: number,
  data: {
    tableCell: string;
    mode: string;
    category: string;
    evaluation: Evaluation;
    rules: { id: string; effect: string; matches: boolean; pattern: string }[];
  },
  deciding: number,
): string {
  if (step > deciding) return "not reached";
  const matched = (effect: string) => data.rules.filter((r) => r.effect === effect && r.matches);
  const rulesText = (effect: string) => {
    const m = matched(effect);
    return m.length === 0 ? `no ${effect} rule matches` : `${m.map((r) => r.pattern).join(", ")} matches`;
  };
  switch (step) {
    case 0:
      return rulesText("deny");
    case 1:
      return data.mode !== "plan"
        ? `not plan mode`
        : data.category === "read"
          ? "read runs in plan mode"
          : `${data.category} is blocked`;
    case 2:
      return rulesText("ask");
    case 3:
      return rulesText("allow");
    case 4:
      return `${data.mode} × ${data.category} → ${data.tableCell === "allow" ? "run" : data.tableCell}`;
    default:
      return data.evaluation.via === "grant"
        ? "the session holds a grant, so it runs"
        : "no grant, so a human is asked";
  }
}
