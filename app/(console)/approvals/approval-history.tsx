"use client";
/** The approvals history: its filter bar and the table of settled requests. */
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { FormEvent } from "react";
import { CategoryBadge } from "@/app/_components/category-badge";
import { DataTable } from "@/app/_components/data-table";
import { FilterSelect } from "@/app/_components/filter-select";
import { JsonText } from "@/app/_components/json-view";
import { RelativeTime } from "@/app/_components/relative-time";
import { useTRPC } from "@/app/_lib/trpc";
import type { ApprovalView, HistoryFilters } from "@/server/services/approval-queue";

const DECISIONS: { value: NonNullable<HistoryFilters["decision"]>; label: string }[] = [
  { value: "allowed_once", label: "allowed once" },
  { value: "allowed_session", label: "allowed for session" },
  { value: "denied", label: "denied" },
  { value: "expired", label: "expired" },
  { value: "abandoned", label: "abandoned" },
];

function outcome(a: ApprovalView): { text: string; className: string } {
  if (a.kind === "uncertain" && a.status === "allowed")
    return { text: "run again", className: "pill pill-ok" };
  if (a.kind === "uncertain" && a.status === "denied")
    return { text: "not run again", className: "pill pill-bad" };
  if (a.status === "allowed") {
    if (a.grantId) return { text: "allowed by session grant", className: "pill pill-ok" };
    return {
      text: a.scope === "session" ? "allowed for session" : "allowed once",
      className: "pill pill-ok",
    };
  }
  if (a.status === "denied") return { text: "denied", className: "pill pill-bad" };
  if (a.status === "abandoned") return { text: "abandoned", className: "pill pill-bad" };
  return { text: a.status, className: "pill" };
}

/** Filters for the history: capability (or `module.*`), key, user, decision and a date range. */
export function HistoryFilterForm({
  values,
  onChange,
}: {
  values: HistoryFilters;
  onChange: (next: HistoryFilters) => void;
}) {
  const trpc = useTRPC();
  const options = useQuery(
    trpc.approvals.historyFilterOptions.queryOptions(undefined, { staleTime: 30_000 }),
  );
  function read(form: HTMLFormElement): HistoryFilters {
    const next: Record<string, string> = {};
    for (const [k, v] of new FormData(form)) if (typeof v === "string" && v.trim()) next[k] = v.trim();
    return next as HistoryFilters;
  }
  function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    onChange(read(e.currentTarget));
  }
  const apply = (e: { currentTarget: { form: HTMLFormElement | null } }) => {
    if (e.currentTarget.form) onChange(read(e.currentTarget.form));
  };
  const active = Object.values(values).some(Boolean);
  return (
    <form className="filters history-filters" onSubmit={onSubmit} aria-label="Filter history">
      <label>
        Capability
        <input
          name="capability"
          defaultValue={values.capability ?? ""}
          placeholder="notes.save or notes.*"
          onBlur={apply}
        />
      </label>
      <FilterSelect
        label="Key"
        name="key"
        value={values.key}
        options={(options.data?.keys ?? []).map((k) => ({ value: k.id, label: k.name }))}
        onChange={apply}
      />
      <FilterSelect
        label="User"
        name="user"
        value={values.user}
        options={(options.data?.users ?? []).map((u) => ({ value: u.id, label: u.displayName }))}
        onChange={apply}
      />
      <FilterSelect
        label="Decision"
        name="decision"
        value={values.decision}
        options={DECISIONS}
        onChange={apply}
      />
      <label>
        From
        <input type="date" name="from" defaultValue={values.from ?? ""} onChange={apply} />
      </label>
      <label>
        To
        <input type="date" name="to" defaultValue={values.to ?? ""} onChange={apply} />
      </label>
      <button type="submit" className="btn">
        Filter
      </button>
      {active && (
        <button
          type="button"
          className="btn"
          onClick={(e) => {
            const form = e.currentTarget.form;
            for (const el of Array.from(form?.elements ?? [])) {
              if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement) el.value = "";
            }
            onChange({});
          }}
        >
          Clear
        </button>
      )}
    </form>
  );
}

/** Settled requests, the most recently decided first; a table that becomes cards on a phone. */
export function HistoryTable({ rows, target }: { rows: ApprovalView[]; target: string | null }) {
  return (
    <DataTable
      testId="approval-history"
      dense={false}
      rows={rows}
      rowKey={(a) => a.id}
      rowProps={(a) => ({ id: a.id, className: a.id === target ? "flash" : undefined })}
      columns={[
        {
          label: "Capability",
          cell: (a) => (
            <>
              <code>{a.capability}</code> <CategoryBadge category={a.category} />
              {a.kind === "uncertain" && (
                <span
                  className="pill pill-wait"
                  title="The call may already have happened; asked whether to run it again"
                >
                  may already have happened
                </span>
              )}
            </>
          ),
        },
        {
          label: "Outcome",
          cell: (a) => {
            const o = outcome(a);
            return (
              <>
                <span className={o.className} data-testid="history-outcome">
                  {o.text}
                </span>
                {a.endReason && <div className="muted field-hint">{a.endReason}</div>}
              </>
            );
          },
        },
        { label: "Asked by", className: "muted", cell: (a) => <AskedBy approval={a} /> },
        {
          label: "Decided",
          className: "muted",
          cell: (a) =>
            a.decidedAt ? (
              <>
                {a.decidedBy ? `${a.decidedBy}, ` : ""}
                <RelativeTime value={a.decidedAt} />
              </>
            ) : (
              <>
                nobody answered · <RelativeTime value={a.expiresAt} />
              </>
            ),
        },
        {
          label: "Arguments",
          cell: (a) => (
            <details>
              <summary className="muted">show</summary>
              <JsonText text={a.argsJson} />
            </details>
          ),
        },
      ]}
    />
  );
}

function AskedBy({ approval: a }: { approval: ApprovalView }) {
  return (
    <>
      {a.requestedBy}
      {a.apiKeyName && !a.requestedBy.includes(a.apiKeyName) ? ` · key "${a.apiKeyName}"` : ""}
      {a.runId && (
        <>
          {" · "}
          <Link href={`/runs/${a.runId}`}>run</Link>
        </>
      )}
    </>
  );
}
