"use client";
import Link from "next/link";
import { CategoryBadge } from "@/app/_components/category-badge";
import { Countdown } from "@/app/_components/countdown";
import { DecisionButtons, useDecide } from "./decision-buttons";
import type { TimelineRow } from "./timeline-model";

const STATE_TEXT: Record<TimelineRow["state"], { text: string; className: string }> = {
  waiting: { text: "waiting…", className: "pill pill-wait" },
  allow: { text: "allowed", className: "pill pill-ok" },
  deny: { text: "denied", className: "pill pill-bad" },
  blocked: { text: "blocked", className: "pill pill-bad" },
  expired: { text: "expired", className: "pill pill-bad" },
  invalid: { text: "refused", className: "pill pill-bad" },
  abandoned: { text: "abandoned", className: "pill pill-bad" },
};

function approvalText(row: TimelineRow): string | null {
  const a = row.approval;
  if (!a) return null;
  const by = a.decidedBy ? ` by ${a.decidedBy}` : "";
  if (a.kind === "uncertain") {
    if (a.status === "allowed") return `may already have happened; run again${by}`;
    if (a.status === "denied") return `may already have happened; not run again${by}, so the action ended`;
    if (a.status === "expired")
      return a.endReason ?? "nobody said to run it again in time, so the action ended";
  }
  if (a.status === "allowed")
    return a.scope === "session" ? `approved for this session${by}` : `approved once${by}`;
  if (a.status === "denied") return `denied${by}`;
  if (a.status === "abandoned") return a.endReason ?? "approved, but the action ended before it ran";
  if (a.status === "expired") return a.endReason ?? "nobody answered in time";
  return null;
}

const clock = (at: number) =>
  new Date(at).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });

/** Something a client renders under a call of `capability` (a toolstore/ui pane), in call order. */
export interface TimelinePane {
  key: string;
  capability: string;
  node: React.ReactNode;
}

/**
 * Pairs the k-th pane of a capability with the k-th row of that capability; a pane whose row has
 * not arrived yet (rows come through the event outbox, panes straight from the client stream)
 * stays unpaired and is shown on its own at the end.
 */
function pairPanes(rows: TimelineRow[], panes: TimelinePane[]) {
  const byRow = new Map<string, TimelinePane>();
  const loose: TimelinePane[] = [];
  const used = new Set<string>();
  for (const pane of panes) {
    const host = rows.find(
      (r) => r.capability === pane.capability && r.state === "allow" && !used.has(r.key),
    );
    if (host) {
      used.add(host.key);
      byRow.set(host.key, pane);
    } else loose.push(pane);
  }
  return { byRow, loose };
}

/** Each capability call with its gate decision; a waiting call can be answered inline. */
export function Timeline({
  rows,
  canDecide,
  empty,
  panes = [],
}: {
  rows: TimelineRow[];
  canDecide: boolean;
  empty: React.ReactNode;
  panes?: TimelinePane[];
}) {
  const decide = useDecide();
  if (rows.length === 0 && panes.length === 0) return <div className="empty">{empty}</div>;
  const { byRow, loose } = pairPanes(rows, panes);
  return (
    <ol className="timeline" aria-label="Gate decisions" data-testid="timeline">
      {rows.map((row) => {
        const state = STATE_TEXT[row.state];
        const note = approvalText(row);
        return (
          <li key={row.key} className={`tl-row tl-${row.state}`} data-capability={row.capability}>
            <div className="tl-head">
              <span className="muted mono tl-time" title={new Date(row.at).toLocaleString()}>
                {clock(row.at)}
              </span>
              <code className="tl-cap">{row.capability}</code>
              <CategoryBadge category={row.category} />
              <span className={state.className} data-testid="decision">
                {row.state === "waiting" && <span className="pulse" aria-hidden />}
                {state.text}
              </span>
              {row.callOk === false && <span className="pill pill-bad">call failed</span>}
              {row.approval?.kind === "uncertain" && (
                <span className="pill pill-wait" data-testid="uncertain-call">
                  may already have happened
                </span>
              )}
              {row.replayed && (
                <span
                  className="pill"
                  data-testid="from-journal"
                  title="Answered from the run's journal on its last replay: the impl did not run again"
                >
                  from journal
                </span>
              )}
              {row.ms !== null && <span className="muted mono tl-ms">{row.ms} ms</span>}
            </div>
            {(row.reason || note) && <div className="tl-reason muted">{note ?? row.reason}</div>}
            {row.state === "waiting" && row.approvalId && (
              <div className="tl-approve">
                {canDecide ? (
                  <DecisionButtons
                    approvalId={row.approvalId}
                    decide={decide}
                    showKeys={false}
                    kind={row.approval?.kind}
                  />
                ) : (
                  <span className="muted">An approver answers this in Approvals.</span>
                )}
                <div className="row" style={{ gap: 10, fontSize: 12.5 }}>
                  {row.approval?.expiresAt ? <Countdown until={row.approval.expiresAt} /> : null}
                  <Link href={`/approvals#${row.approvalId}`}>Open in queue</Link>
                </div>
              </div>
            )}
            {byRow.get(row.key)?.node}
          </li>
        );
      })}
      {loose.map((pane) => (
        <li key={pane.key} className="tl-row tl-allow" data-capability={pane.capability}>
          <div className="tl-head">
            <code className="tl-cap">{pane.capability}</code>
          </div>
          {pane.node}
        </li>
      ))}
    </ol>
  );
}
