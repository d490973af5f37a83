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
  if (a.status === "allowed")
    return a.scope === "session" ? `approved for this session${by}` : `approved once${by}`;
  if (a.status === "denied") return `denied${by}`;
  if (a.status === "abandoned") return a.endReason ?? "approved, but the action ended before it ran";
  if (a.status === "expired") return a.endReason ?? "nobody answered in time";
  return null;
}

const clock = (at: number) =>
  new Date(at).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });

/** Each capability call with its gate decision; a waiting call can be answered inline. */
export function Timeline({
  rows,
  canDecide,
  empty,
}: {
  rows: TimelineRow[];
  canDecide: boolean;
  empty: React.ReactNode;
}) {
  const decide = useDecide();
  if (rows.length === 0) return <div className="empty">{empty}</div>;
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
              {row.ms !== null && <span className="muted mono tl-ms">{row.ms} ms</span>}
              {row.callOk === false && <span className="pill pill-bad">call failed</span>}
            </div>
            {(row.reason || note) && <div className="tl-reason muted">{note ?? row.reason}</div>}
            {row.state === "waiting" && row.approvalId && (
              <div className="tl-approve">
                {canDecide ? (
                  <DecisionButtons approvalId={row.approvalId} decide={decide} showKeys={false} />
                ) : (
                  <span className="muted">An approver answers this in Approvals.</span>
                )}
                <div className="row" style={{ gap: 10, fontSize: 12.5 }}>
                  {row.approval?.expiresAt ? <Countdown until={row.approval.expiresAt} /> : null}
                  <Link href={`/approvals#${row.approvalId}`}>Open in queue</Link>
                </div>
              </div>
            )}
          </li>
        );
      })}
    </ol>
  );
}
