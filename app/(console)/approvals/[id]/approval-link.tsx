"use client";
/**
 * One approval on its own page, the target of a notification's link: the live card while it
 * waits (answered with the same buttons and keys as the queue), then what became of it.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import Link from "next/link";
import { CategoryBadge } from "@/app/_components/category-badge";
import { EmptyState } from "@/app/_components/empty-state";
import { RelativeTime } from "@/app/_components/relative-time";
import { useTRPC } from "@/app/_lib/trpc";
import { APPROVAL_EVENT_TYPES } from "@/server/core/event-types";
import type { PendingApprovalView } from "@/server/services/approval-queue";
import { useDecide } from "../../_run/decision-buttons";
import { ApprovalCard } from "../approval-card";

function outcome(a: PendingApprovalView): string {
  if (a.kind === "uncertain") {
    if (a.status === "allowed") return "Run again";
    if (a.status === "denied") return "Not run again: the action ended";
    if (a.status === "expired") return "Expired: not run again, the action ended";
  }
  if (a.status === "allowed") return a.scope === "session" ? "Allowed for the session" : "Allowed once";
  if (a.status === "denied") return "Denied";
  if (a.status === "expired") return "Expired (counts as denied)";
  if (a.status === "abandoned") return "Allowed, but the action ended before it ran";
  return a.status;
}

export function ApprovalLink({
  id,
  initial,
  since,
  canDecide,
}: {
  id: string;
  initial: PendingApprovalView | null;
  since: number;
  canDecide: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const card = useQuery(trpc.approvals.card.queryOptions({ id }, { initialData: initial, staleTime: 0 }));
  useSubscription(
    trpc.events.live.subscriptionOptions(
      { types: [...APPROVAL_EVENT_TYPES], lastEventId: String(since) },
      {
        onData: () => void queryClient.invalidateQueries({ queryKey: trpc.approvals.card.queryKey({ id }) }),
      },
    ),
  );
  const decide = useDecide();
  const approval = card.data ?? initial;

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Approval</h1>
          <p>
            <Link href="/approvals">All pending approvals</Link>
          </p>
        </div>
      </div>
      {!approval ? (
        <EmptyState className="card" title="No such approval">
          This link names a request that does not exist (or was pruned). See the{" "}
          <Link href="/approvals">queue</Link>.
        </EmptyState>
      ) : approval.status === "pending" ? (
        <ApprovalCard
          approval={approval}
          canDecide={canDecide}
          decide={decide}
          highlighted={false}
          selected
          onSelect={() => undefined}
          onAnswered={() =>
            void queryClient.invalidateQueries({ queryKey: trpc.approvals.card.queryKey({ id }) })
          }
        />
      ) : (
        <section className={`approval-card card edge-${approval.category}`} data-testid="approval-outcome">
          <header className="approval-head">
            <code className="approval-cap">{approval.capability}</code>
            <CategoryBadge category={approval.category} />
          </header>
          <p>
            <strong data-testid="approval-status">{outcome(approval)}</strong>
            {approval.decidedBy ? ` by ${approval.decidedBy}` : ""}
            {approval.decidedAt ? (
              <>
                {" "}
                <RelativeTime value={approval.decidedAt} />
              </>
            ) : null}
            {approval.endReason ? ` — ${approval.endReason}` : ""}
          </p>
          <p className="muted">Asked by {approval.requestedBy}.</p>
        </section>
      )}
    </>
  );
}
