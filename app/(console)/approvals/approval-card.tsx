"use client";
import Link from "next/link";
import { CategoryBadge } from "@/app/_components/category-badge";
import { Countdown } from "@/app/_components/countdown";
import { JsonText } from "@/app/_components/json-view";
import { RelativeTime } from "@/app/_components/relative-time";
import type { PendingApprovalView } from "@/server/services/approval-queue";
import { ActionManifestView } from "../_run/action-manifest";
import { DecisionButtons, type useDecide } from "../_run/decision-buttons";

/**
 * One pending request: what exactly, who asked, until when, and the pre-flight manifest of the
 * action that asks. The queue handles J/K and A/S/D for the selected card (approvals-queue.tsx).
 * An `uncertain` request (the call may already have happened) says so first and asks whether to
 * run it again: A runs it again, D does not, and there is no session grant.
 */
export function ApprovalCard({
  approval,
  canDecide,
  decide,
  highlighted,
  selected,
  onSelect,
  onAnswered,
}: {
  approval: PendingApprovalView;
  canDecide: boolean;
  decide: ReturnType<typeof useDecide>;
  highlighted: boolean;
  /** The card the keyboard answers (focused, or first in the queue). */
  selected: boolean;
  onSelect: () => void;
  /** A button answered it: the queue moves the focus to the next card. */
  onAnswered: () => void;
}) {
  const expiresAt = new Date(approval.expiresAt).getTime();
  const titleId = `ap-${approval.id}-title`;
  const uncertain = approval.kind === "uncertain";
  return (
    <article
      id={approval.id}
      className={`approval-card card edge-${approval.category}${uncertain ? " approval-uncertain" : ""}${highlighted ? " flash" : ""}${selected ? " selected" : ""}`}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the card takes focus so A/S/D answer it
      tabIndex={0}
      aria-labelledby={uncertain ? `${titleId}-uncertain ${titleId}` : titleId}
      aria-keyshortcuts={canDecide ? (approval.sessionGrantable ? "A S D" : "A D") : undefined}
      aria-current={selected ? "true" : undefined}
      onFocus={onSelect}
      data-testid="approval-card"
      data-expires-at={expiresAt}
      data-session-grantable={approval.sessionGrantable ? "true" : "false"}
      data-kind={approval.kind}
    >
      {uncertain && (
        <div className="uncertain-note" data-testid="uncertain-note">
          <h3 id={`${titleId}-uncertain`}>This call may already have happened</h3>
          <p>
            The server process stopped while this call's impl was running, so ToolStore cannot tell whether
            its effect happened. Check the target system first. <strong>Run it again</strong> only if it did
            not happen; <strong>Don't run it again</strong> ends the action with an error.
          </p>
        </div>
      )}
      <header className="approval-head">
        <code id={titleId} className="approval-cap">
          {approval.capability}
        </code>
        <CategoryBadge category={approval.category} />
        <span className="spacer" />
        <span className="muted approval-who">
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
      <div className="approval-args" data-testid="approval-args">
        <JsonText text={approval.argsJson} label={`Arguments of ${approval.capability}`} />
      </div>
      {approval.manifest && (
        <details className="approval-manifest" open={selected}>
          <summary>
            Pre-flight: what this action imports, can reach and did so far
            <span className="muted"> · {approval.manifest.reachable.length} capabilities</span>
          </summary>
          <ActionManifestView manifest={approval.manifest} highlight={[approval.capability]} compact />
        </details>
      )}
      <footer className="approval-foot">
        <Countdown until={expiresAt} />
        <span className="muted mono" title={`sha256 of the argument snapshot: ${approval.argsHash}`}>
          #{approval.argsHash.slice(0, 10)}
        </span>
        <span className="spacer" />
        {canDecide ? (
          <DecisionButtons
            approvalId={approval.id}
            decide={decide}
            sessionGrantable={approval.sessionGrantable}
            kind={approval.kind}
            onAnswer={onAnswered}
          />
        ) : (
          <span className="muted">Read only: answering needs the approver role.</span>
        )}
      </footer>
    </article>
  );
}
