"use client";
/**
 * The Approvals page: pending requests as cards (answered with the mouse or J/K and A/S/D), the
 * session grants in force, and the history of settled requests, all kept live over SSE.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import Link from "next/link";
import { useRef, useState } from "react";
import { EmptyState } from "@/app/_components/empty-state";
import { ErrorNote } from "@/app/_components/error-note";
import { useTRPC } from "@/app/_lib/trpc";
import { APPROVAL_EVENT_TYPES, type LiveEventType } from "@/server/core/event-types";
import type { HistoryFilters, listApprovalQueue } from "@/server/services/approval-queue";
import { useDecide } from "../_run/decision-buttons";
import { ApprovalCard } from "./approval-card";
import { HistoryFilterForm, HistoryTable } from "./approval-history";
import { useFocusLinkedCard, useHashTarget, useQueueKeys } from "./queue-keyboard";

type Queue = Awaited<ReturnType<typeof listApprovalQueue>>;
const LIVE_TYPES: LiveEventType[] = [...APPROVAL_EVENT_TYPES, "grants.revoked"];

export function ApprovalsQueue({
  initial,
  since,
  canDecide,
}: {
  initial: Queue;
  /** The newest event's seq before `initial` was read: the live view starts after it. */
  since: number;
  canDecide: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [filters, setFilters] = useState<HistoryFilters>({});
  const filtered = Object.values(filters).some(Boolean);
  const queue = useQuery(
    trpc.approvals.queue.queryOptions(filters, {
      initialData: filtered ? undefined : initial,
      placeholderData: (previous) => previous,
      staleTime: 0,
    }),
  );
  const live = useSubscription(
    trpc.events.live.subscriptionOptions(
      { types: LIVE_TYPES, lastEventId: String(since) },
      {
        onData: () => {
          void queryClient.invalidateQueries({ queryKey: trpc.approvals.queue.queryKey() });
          void queryClient.invalidateQueries({ queryKey: trpc.approvals.pendingCount.queryKey() });
        },
      },
    ),
  );
  const decide = useDecide();
  const data = queue.data ?? initial;
  const target = useHashTarget();
  const list = useRef<HTMLDivElement>(null);
  const pendingIds = data.pending.map((p) => p.id).join(",");
  useFocusLinkedCard(target, pendingIds);
  const keys = useQueueKeys({ list, pendingIds, count: data.pending.length, canDecide, decide });

  return (
    <>
      <QueueHead
        canDecide={canDecide}
        status={live.status}
        uncertain={data.pending.some((p) => p.kind === "uncertain")}
      />
      {queue.error && <ErrorNote error={queue.error} />}

      <section aria-labelledby="pending-h" className="stack">
        <h2 id="pending-h">
          Pending <span className="pill">{data.pending.length}</span>
        </h2>
        <div ref={list} className="stack" aria-live="polite">
          {data.pending.length === 0 ? (
            <EmptyState className="card" title="No pending approvals">
              Write, execute and external calls in default mode wait here for a decision. Try one in the{" "}
              <Link href="/playground">Playground</Link>.
            </EmptyState>
          ) : (
            data.pending.map((a, i) => (
              <ApprovalCard
                key={a.id}
                approval={a}
                canDecide={canDecide}
                decide={decide}
                highlighted={a.id === target}
                selected={canDecide && i === keys.selectedIndex}
                onSelect={() => keys.select(i)}
                onAnswered={() => keys.answered(i)}
              />
            ))
          )}
        </div>
      </section>

      <Grants grants={data.grants} canRevoke={canDecide} />

      <section aria-labelledby="history-h" className="card" style={{ marginTop: 16 }}>
        <h2 id="history-h">History</h2>
        <p className="muted" style={{ marginTop: -4 }}>
          Most recently decided first.
        </p>
        <HistoryFilterForm values={filters} onChange={setFilters} />
        {data.history.length === 0 ? (
          <EmptyState
            className="empty-compact"
            title={filtered ? "No decisions match these filters" : "No decisions yet"}
          >
            {filtered ? "Clear a filter to see more." : "Answered and expired requests move here."}
          </EmptyState>
        ) : (
          <HistoryTable rows={data.history} target={target} />
        )}
      </section>
    </>
  );
}

function QueueHead({
  canDecide,
  status,
  uncertain,
}: {
  canDecide: boolean;
  status: string;
  /** A pending card asks whether to run a call that may already have happened again. */
  uncertain: boolean;
}) {
  const connected = status === "pending";
  return (
    <div className="page-head">
      <div>
        <h1>Approvals</h1>
        {canDecide ? (
          <p>
            Calls that wait for a human. <kbd>J</kbd>/<kbd>K</kbd> move between requests; <kbd>A</kbd> allows
            the selected one once, <kbd>S</kbd> for the session, <kbd>D</kbd> denies.
            {uncertain && (
              <>
                {" "}
                On a card whose call may already have happened, <kbd>A</kbd> runs it again and <kbd>D</kbd>{" "}
                does not.
              </>
            )}
          </p>
        ) : (
          <p>Calls that wait for a human. You can watch the queue; approvers answer it.</p>
        )}
      </div>
      <span className="muted row" data-testid="live-status">
        <span className={`live-dot ${connected ? "" : "off"}`} aria-hidden /> {connected ? "live" : status}
      </span>
    </div>
  );
}

function Grants({ grants, canRevoke }: { grants: Queue["grants"]; canRevoke: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const revoke = useMutation(
    trpc.approvals.revokeSessionGrants.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.approvals.queue.queryKey() }),
    }),
  );
  return (
    <section aria-labelledby="grants-h" className="card" style={{ marginTop: 16 }}>
      <h2 id="grants-h">Session grants</h2>
      {revoke.error && <ErrorNote error={revoke.error} />}
      {grants.length === 0 ? (
        <EmptyState className="empty-compact" title="No session grants">
          "Allow for session" lets a session repeat a capability without asking; such grants are listed here
          and can be revoked in one action.
        </EmptyState>
      ) : (
        <ul className="grants">
          {grants.map((g) => (
            <li key={g.sessionId} className="grant-row">
              <div className="stack" style={{ gap: 4 }}>
                <span>
                  <strong>{g.label}</strong>{" "}
                  <span className="muted mono" title={g.sessionId}>
                    session {g.sessionId.slice(-6)}
                  </span>
                </span>
                <div className="row" style={{ gap: 6 }}>
                  {g.capabilities.map((c) => (
                    <code
                      key={c.capability}
                      className="export-chip"
                      title={c.grantedBy ? `granted by ${c.grantedBy}` : undefined}
                    >
                      {c.capability}
                    </code>
                  ))}
                </div>
              </div>
              {canRevoke && (
                <button
                  type="button"
                  className="btn btn-sm btn-danger"
                  disabled={revoke.isPending}
                  onClick={() => revoke.mutate({ sessionId: g.sessionId })}
                  aria-label={`Revoke session grants of ${g.label}`}
                >
                  Revoke session grants
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
