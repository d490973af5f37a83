"use client";
/** The default mode of console sessions, and the mode × category table the gate applies. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { CATEGORIES, MODES, type Mode } from "@/server/core/capabilities/types";
import { MODE_TABLE, type ModeCell } from "@/server/core/gate/terms";
import { DataTable } from "../../_components/data-table";
import { ErrorNote } from "../../_components/error-note";
import { useTRPC } from "../../_lib/trpc";

const ABOUT: Record<Mode, string> = {
  plan: "A dry run: reads run; in an action the other calls are planned, not run (approve the plan to run them); a direct call is blocked.",
  default: "Reads run; write, execute and external ask a human.",
  auto: "Everything runs without asking. Deny rules still apply.",
};

/** The gate's own table; "allow" reads as "run" here. */
const CELL_LABEL: Record<ModeCell, string> = { allow: "run", ask: "ask", blocked: "blocked" };

export function DefaultModeCard({ canEdit }: { canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const mode = useQuery(trpc.rules.defaultMode.queryOptions());
  // The choice shows at once; a refused change falls back to the stored mode.
  const [chosen, setChosen] = useState<Mode | null>(null);
  const set = useMutation(
    trpc.rules.setDefaultMode.mutationOptions({
      onSuccess: (value) => qc.setQueryData(trpc.rules.defaultMode.queryKey(), value),
      onSettled: () => setChosen(null),
    }),
  );
  const current = chosen ?? mode.data;
  return (
    <section className="card" aria-labelledby="mode-h">
      <h2 id="mode-h">Default mode</h2>
      <p className="muted small" style={{ marginTop: 0 }}>
        The mode a console session starts in. Each API key carries its own mode.
      </p>
      <ErrorNote error={mode.error ?? set.error} />
      <fieldset className="mode-options" disabled={!canEdit || !current}>
        <legend className="visually-hidden">Default mode</legend>
        {MODES.map((m) => (
          <label key={m} className="mode-option">
            <input
              type="radio"
              name="default-mode"
              value={m}
              checked={current === m}
              onChange={() => {
                setChosen(m);
                set.mutate({ mode: m });
              }}
            />
            <span>
              <strong>{m}</strong> <span className="small muted">{ABOUT[m]}</span>
            </span>
          </label>
        ))}
      </fieldset>
      {!canEdit && <p className="field-hint">Only an admin changes the default mode.</p>}
      <DataTable
        label="What each mode does with each category"
        className="matrix"
        dense={false}
        cards={false}
        rows={MODES}
        rowKey={(m) => m}
        rowProps={(m) => ({ className: m === current ? "current" : undefined })}
        columns={[
          {
            label: "mode",
            cell: (m) => (
              <>
                {m}
                {m === current && <span className="visually-hidden"> (default)</span>}
              </>
            ),
          },
          ...CATEGORIES.map((c) => ({
            label: c,
            cell: (m: Mode) => (
              <span className={`effect effect-${MODE_TABLE[m][c]}`}>{CELL_LABEL[MODE_TABLE[m][c]]}</span>
            ),
          })),
        ]}
      />
    </section>
  );
}
