"use client";
import Link from "next/link";
import type { KeyboardEvent } from "react";
import { CategoryBadge } from "@/app/_components/category-badge";
import { Countdown } from "@/app/_components/countdown";
import { JsonText } from "@/app/_components/json-view";
import { RelativeTime } from "@/app/_components/relative-time";
import type { ApprovalView } from "@/server/services/approval-queue";
import { type Answer, DecisionButtons, type useDecide } from "../_run/decision-buttons";

const KEYS: Record<string, Answer> = { a: "once", s: "session", d: "deny" };

/** One pending request: what exactly, who asked, until when; A/S/D answer it while it has focus. */
export function ApprovalCard({
  approval,
  canDecide,
  decide,
  highlighted,
  onMove,
  onAnswered,
}: {
  approval: ApprovalView;
  canDecide: boolean;
  decide: ReturnType<typeof useDecide>;
  highlighted: boolean;
  onMove: (delta: 1 | -1) => void;
  onAnswered: () => void;
}) {
  const expiresAt = new Date(approval.expiresAt).getTime();
  function onKeyDown(e: KeyboardEvent<HTMLElement>) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key.toLowerCase();
    if (key === "j" || key === "arrowdown") {
      e.preventDefault();
      onMove(1);
      return;
    }
    if (key === "k" || key === "arrowup") {
      e.preventDefault();
      onMove(-1);
      return;
    }
    const answer = KEYS[key];
    if (!answer || !canDecide || decide.isPending || expiresAt <= Date.now()) return;
    e.preventDefault();
    onAnswered();
    decide.mutate({ approvalId: approval.id, answer });
  }
  const titleId = `ap-${approval.id}-title`;
  return (
    <article
      id={approval.id}
      className={`approval-card card edge-${approval.category}${highlighted ? " flash" : ""}`}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the card takes focus so A/S/D answer it
      tabIndex={0}
      aria-labelledby={titleId}
      aria-keyshortcuts={canDecide ? "A S D" : undefined}
      onKeyDown={onKeyDown}
      data-testid="approval-card"
    >
      <header className="approval-head">
        <code id={titleId} className="approval-cap">
          {approval.capability}
        </code>
        <CategoryBadge category={approval.category} />
        <span className="spacer" />
        <span className="muted">
          asked by <strong className="who">{approval.requestedBy}</strong>
          {approval.apiKeyName && !approval.requestedBy.includes(approval.apiKeyName)
            ? ` · key "${approval.apiKeyName}"`
            : ""}
          {approval.runId && (
            <>
              {" · "}
              <Link href={`/runs/${approval.runId}`}>
                run {approval.runTitle || `#${approval.runId.slice(-6)}`}
              </Link>
            </>
          )}
          {" · "}
          <RelativeTime value={approval.createdAt} />
        </span>
      </header>
      <div className="approval-args">
        <JsonText text={approval.argsJson} label={`Arguments of ${approval.capability}`} />
      </div>
      <footer className="approval-foot">
        <Countdown until={expiresAt} />
        <span className="muted mono" title={`sha256 of the argument snapshot: ${approval.argsHash}`}>
          #{approval.argsHash.slice(0, 10)}
        </span>
        <span className="spacer" />
        {canDecide ? (
          <DecisionButtons approvalId={approval.id} decide={decide} />
        ) : (
          <span className="muted">Read only: answering needs the approver role.</span>
        )}
      </footer>
    </article>
  );
}
