"use client";
/**
 * What-if over recorded calls, in the rule form: the draft rule (a new one, or the edit of the
 * one picked) is weighed against the last recorded gate decisions by the same evaluation the gate
 * runs, and the decisions it would change are listed with the run to open. Nothing is saved.
 */
import { useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { BusyButton } from "../../_components/busy-button";
import { ErrorNote } from "../../_components/error-note";
import { RelativeTime } from "../../_components/relative-time";
import { type RouterOutputs, useTRPC } from "../../_lib/trpc";
import type { StoredRule } from "./rule-draft";

type WhatIf = RouterOutputs["rules"]["whatIf"];

const LAST = 500;
const SHOWN = 8;

export function WhatIfPreview({
  editingId,
  draft,
}: {
  /** The rule being edited; absent for a new rule. */
  editingId: string | undefined;
  /** Builds the rule from the form; throws with the form's own message when it is not valid. */
  draft: () => StoredRule;
}) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [result, setResult] = useState<WhatIf | null>(null);

  async function preview() {
    setBusy(true);
    setError(null);
    try {
      const rule = draft();
      const input = {
        draft: editingId ? { edit: [{ id: editingId, ...rule }] } : { add: [rule] },
        last: LAST,
      };
      setResult(await qc.fetchQuery(trpc.rules.whatIf.queryOptions(input, { staleTime: 0 })));
    } catch (problem) {
      setResult(null);
      setError(problem as Error);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="what-if" data-testid="what-if">
      <BusyButton busy={busy} busyLabel="Weighing recorded calls…" onClick={() => void preview()}>
        What would this change?
      </BusyButton>
      <ErrorNote error={error} />
      {result && <WhatIfResult result={result} />}
    </div>
  );
}

function WhatIfResult({ result }: { result: WhatIf }) {
  if (result.examined === 0)
    return <p className="muted">No recorded calls yet: run some actions, then weigh the draft again.</p>;
  return (
    <div className="what-if-result" role="status">
      <p>
        Over the last {result.examined} recorded call{result.examined === 1 ? "" : "s"},{" "}
        <strong data-testid="what-if-changed">
          {result.changed === 0
            ? "no decision would change"
            : `${result.changed} decision${result.changed === 1 ? "" : "s"} would change`}
        </strong>
        {result.withoutArgs > 0 && (
          <span className="muted"> ({result.withoutArgs} weighed without their arguments, not recorded)</span>
        )}
        .
      </p>
      {result.transitions.length > 0 && (
        <ul className="what-if-transitions">
          {result.transitions.map((t) => (
            <li key={`${t.from}-${t.to}`}>
              <span className={`effect effect-${t.from}`}>{t.from}</span> →{" "}
              <span className={`effect effect-${t.to}`}>{t.to}</span> · {t.count}
            </li>
          ))}
        </ul>
      )}
      {result.changes.length > 0 && (
        <ol className="what-if-changes">
          {result.changes.slice(0, SHOWN).map((c) => (
            <li key={c.decisionId} data-testid="what-if-change">
              <code>{c.capability}</code> {c.before} → {c.after}{" "}
              <span className="muted small">
                <RelativeTime value={c.at} /> · {c.afterReason}
              </span>{" "}
              {c.runId && <Link href={`/runs/${c.runId}`}>open run</Link>}
            </li>
          ))}
        </ol>
      )}
      {result.changes.length > SHOWN && (
        <p className="muted small">
          and {result.changed - SHOWN} more; <code>npm run toolstore -- rules what-if</code> lists them all.
        </p>
      )}
    </div>
  );
}
