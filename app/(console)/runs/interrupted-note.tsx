import type { ObservationEnvelope } from "@/server/core/actions/envelope";

const OUTCOME_TEXT: Record<string, string> = {
  completed: "ran to the end — its side effect happened",
  failed: "ran and failed",
  unknown: "was running when the server stopped — its side effect may or may not have happened",
  not_run: "did not run (the gate said no)",
};

/** For a run whose server process died: which calls the audit saw, and whether each happened. */
export function InterruptedNote({ envelope }: { envelope: ObservationEnvelope | null }) {
  const calls = envelope?.calls ?? [];
  return (
    <section
      className="card"
      aria-labelledby="interrupted-h"
      data-testid="interrupted-note"
      style={{ marginTop: 12 }}
    >
      <h2 id="interrupted-h">Interrupted: the server stopped during this run</h2>
      {calls.length === 0 ? (
        <p className="muted">The audit recorded no capability call before it stopped: nothing ran.</p>
      ) : (
        <ul>
          {calls.map((c, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: calls are identified by their order
            <li key={i}>
              <code>{c.capability}</code> {OUTCOME_TEXT[c.outcome ?? ""] ?? c.decision}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
