"use client";
/**
 * An MCP server's tools: what the server proposes, the category an admin accepted, the status (with
 * the upstream change that sent an accepted tool back to review), and for an editor a category to
 * accept or set per tool, or every proposal at once.
 */
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { CATEGORIES, type Category } from "@/server/core/capabilities/types";
import { CategoryBadge } from "../../../_components/category-badge";
import { type Column, DataTable } from "../../../_components/data-table";
import { DiffView } from "../../../_components/diff-view";
import { DisclosureButton } from "../../../_components/disclosure-button";
import { ErrorNote } from "../../../_components/error-note";
import { type RouterOutputs, useTRPC } from "../../../_lib/trpc";

type Server = RouterOutputs["mcpServers"]["get"];
type Tool = Server["toolList"][number];

const STATUS_PILL: Record<string, string> = { accepted: "pill-ok", collision: "pill-bad" };

function ToolStatus({
  tool: t,
  showDiff,
  onShowDiff,
}: {
  tool: Tool;
  showDiff: boolean;
  onShowDiff: (show: boolean) => void;
}) {
  return (
    <>
      <span className={`pill ${STATUS_PILL[t.status] ?? "pill-wait"}`}>{t.status}</span>
      {t.reason && <div className="small muted">{t.reason}</div>}
      {t.diff && (
        <DisclosureButton className="btn btn-sm" open={showDiff} onToggle={onShowDiff}>
          {showDiff ? "Hide change" : "Show change"}
        </DisclosureButton>
      )}
      {showDiff && t.diff && <DiffView lines={t.diff} testId={`diff-${t.name}`} />}
    </>
  );
}

function CategoryPicker({
  tool: t,
  pick,
  onPick,
  busy,
  onApply,
}: {
  tool: Tool;
  pick: string;
  onPick: (category: string) => void;
  busy: boolean;
  onApply: (category: Category) => void;
}) {
  if (t.status === "collision") return null;
  const verb = t.status === "accepted" ? "Set" : "Accept";
  return (
    <span className="row">
      <label>
        <span className="visually-hidden">Category of {t.name}</span>
        <select value={pick} onChange={(e) => onPick(e.target.value)}>
          <option value="" disabled>
            choose…
          </option>
          {CATEGORIES.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        className="btn btn-sm"
        disabled={!pick || busy || (t.status === "accepted" && pick === t.effectiveCategory)}
        aria-label={`${verb} ${t.name}`}
        onClick={() => onApply(pick as Category)}
      >
        {verb}
      </button>
    </span>
  );
}

/** What each section of a server's page is handed; `onDone` refetches the server after a change. */
export interface ServerSectionProps {
  name: string;
  server: Server;
  canEdit: boolean;
  onDone: () => Promise<unknown>;
}

export function McpTools({ name, server: s, canEdit, onDone }: ServerSectionProps) {
  const trpc = useTRPC();
  const categorize = useMutation(trpc.mcpServers.categorize.mutationOptions({ onSuccess: onDone }));
  const [chosen, setChosen] = useState<Record<string, string>>({});
  const [diffOf, setDiffOf] = useState<string | null>(null);
  const reviewable = s.toolList.filter((t) => t.status === "pending" && t.proposedCategory);
  const pickOf = (t: Tool) => chosen[t.name] ?? t.effectiveCategory ?? t.proposedCategory ?? "";

  const columns: Column<Tool>[] = [
    {
      label: "Tool",
      cell: (t) => (
        <>
          <code>{t.exportName}</code>
          {t.exportName !== t.name && <span className="small muted"> (upstream {t.name})</span>}
          <div className="small muted clamp-2" title={t.description}>
            {t.description || "No description."}
          </div>
        </>
      ),
    },
    { label: "Proposed", cell: (t) => <CategoryBadge category={t.proposedCategory} /> },
    {
      label: "Category",
      cell: (t) =>
        t.status === "accepted" ? (
          <CategoryBadge category={t.effectiveCategory} />
        ) : (
          <span className="muted">—</span>
        ),
    },
    {
      label: "Status",
      cell: (t) => (
        <ToolStatus
          tool={t}
          showDiff={diffOf === t.name}
          onShowDiff={(show) => setDiffOf(show ? t.name : null)}
        />
      ),
    },
  ];
  if (canEdit) {
    columns.push({
      label: "Actions",
      hideLabel: true,
      className: "actions",
      cell: (t) => (
        <CategoryPicker
          tool={t}
          pick={pickOf(t)}
          onPick={(category) => setChosen({ ...chosen, [t.name]: category })}
          busy={categorize.isPending}
          onApply={(category) => categorize.mutate({ name, rules: [{ glob: t.name, category }] })}
        />
      ),
    });
  }

  return (
    <section className="card" aria-labelledby="tools-h">
      <ErrorNote error={categorize.error} />
      <div className="row" style={{ justifyContent: "space-between" }}>
        <h2 id="tools-h">
          Tools{" "}
          <span className="field-hint">
            {s.accepted} accepted, {s.pending} not importable
          </span>
        </h2>
        {canEdit && reviewable.length > 0 && (
          <button
            type="button"
            className="btn btn-primary btn-sm"
            disabled={categorize.isPending}
            onClick={() =>
              categorize.mutate({
                name,
                rules: reviewable.map((t) => ({ glob: t.name, category: "proposed" as const })),
              })
            }
          >
            Accept all proposed ({reviewable.length})
          </button>
        )}
      </div>
      {s.toolList.length === 0 ? (
        <div className="empty">
          <strong>No tools listed</strong>
          {s.toolsSyncedAt
            ? "The server lists no tools."
            : "The server has not been reached yet: press Refresh tools."}
        </div>
      ) : (
        <DataTable
          label="Tools"
          columns={columns}
          rows={s.toolList}
          rowKey={(t) => t.name}
          rowProps={(t) => ({ "data-testid": `tool-${t.name}` })}
        />
      )}
    </section>
  );
}
