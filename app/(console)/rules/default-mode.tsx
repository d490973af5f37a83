"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorNote } from "../../_components/error-note";
import { useTRPC } from "../../_lib/trpc";

export const MODES = ["plan", "default", "auto"] as const;
export type Mode = (typeof MODES)[number];

const ABOUT: Record<Mode, string> = {
  plan: "Only read capabilities run; everything else is blocked.",
  default: "Reads run; write, execute and external ask a human.",
  auto: "Everything runs without asking. Deny rules still apply.",
};

const CELLS: Record<Mode, Record<string, "run" | "ask" | "blocked">> = {
  plan: { read: "run", write: "blocked", execute: "blocked", external: "blocked" },
  default: { read: "run", write: "ask", execute: "ask", external: "ask" },
  auto: { read: "run", write: "run", execute: "run", external: "run" },
};
const CELL_CLASS = { run: "effect-allow", ask: "effect-ask", blocked: "effect-blocked" } as const;

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
      <table className="matrix" aria-label="What each mode does with each category">
        <thead>
          <tr>
            <th scope="col">mode</th>
            <th scope="col">read</th>
            <th scope="col">write</th>
            <th scope="col">execute</th>
            <th scope="col">external</th>
          </tr>
        </thead>
        <tbody>
          {MODES.map((m) => (
            <tr key={m} className={m === current ? "current" : undefined}>
              <td>
                {m}
                {m === current && <span className="visually-hidden"> (default)</span>}
              </td>
              {Object.entries(CELLS[m]).map(([cat, cell]) => (
                <td key={cat}>
                  <span className={`effect ${CELL_CLASS[cell]}`}>{cell}</span>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
