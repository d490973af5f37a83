"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import { ErrorNote } from "@/app/_components/error-note";
import { useTRPC } from "@/app/_lib/trpc";
import { APPROVAL_EVENT_TYPES, type LiveEventType } from "@/server/core/event-types";
import type { HistoryFilters, listApprovalQueue } from "@/server/services/approval-queue";
import { type Answer, useDecide } from "../_run/decision-buttons";
import { ApprovalCard } from "./approval-card";
import { HistoryFilterForm, HistoryTable } from "./approval-history";

type Queue = Awaited<ReturnType<typeof listApprovalQueue>>;
const LIVE_TYPES: LiveEventType[] = [...APPROVAL_EVENT_TYPES, "grants.revoked"];
const KEYS: Record<string, Answer> = { a: "once", s: "session", d: "deny" };

/** Keys typed into a field, or with a modifier, belong to the field or the browser, not the queue. */
function isTyping(e: KeyboardEvent): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return true;
  const t = e.target as HTMLElement | null;
  return !!t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
}

/** The target of /approvals#<id>, highlighted once it is on the page. */
function useHashTarget(): string | null {
  const [hash, setHash] = useState<string | null>(null);
  useEffect(() => {
    const read = () => setHash(decodeURIComponent(window.location.hash.slice(1)) || null);
    read();
    window.addEventListener("hashchange", read);
    return () => window.removeEventListener("hashchange", read);
  }, []);
  return hash;
}

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
  const answeredIndex = useRef<number | null>(null);
  /** The card J/K moved to (or that has focus); A/S/D answer it. The first card until then. */
  const [selected, setSelected] = useState(0);
  const selectedIndex = Math.min(selected, Math.max(0, data.pending.length - 1));

  // Scroll the linked card into view and give it focus, once it exists. The list re-renders as
  // live data arrives; if that drops the focus to the page body, put it back on the linked card.
  const pendingIds = data.pending.map((p) => p.id).join(",");
  const focusedTarget = useRef<string | null>(null);
  useEffect(() => {
    if (!target || !pendingIds.includes(target)) return;
    const el = document.getElementById(target);
    if (!el || el.tabIndex < 0) return;
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (focusedTarget.current === target && !lost) return;
    if (focusedTarget.current !== target) el.scrollIntoView({ block: "center" });
    el.focus({ preventScroll: true });
    focusedTarget.current = target;
  }, [target, pendingIds]);

  // After a keyboard answer, keep the focus in the queue: the card that took the answered one's place.
  useEffect(() => {
    const index = answeredIndex.current;
    if (index === null || !pendingIds) return;
    const cards = list.current?.querySelectorAll<HTMLElement>("[data-testid=approval-card]");
    if (!cards || cards.length === 0) return;
    const next = Math.min(index, cards.length - 1);
    cards[next]?.focus();
    setSelected(next);
    answeredIndex.current = null;
  }, [pendingIds]);

  // J/K and A/S/D work from anywhere on the page, without focusing a card first.
  const keyState = useRef({ selectedIndex, canDecide, decide });
  keyState.current = { selectedIndex, canDecide, decide };
  useEffect(() => {
    function onKeyDown(e: KeyboardEvent) {
      if (isTyping(e)) return;
      const cards = [...(list.current?.querySelectorAll<HTMLElement>("[data-testid=approval-card]") ?? [])];
      if (cards.length === 0) return;
      const state = keyState.current;
      const focused = cards.findIndex((c) => c.contains(document.activeElement));
      const current = focused >= 0 ? focused : Math.min(state.selectedIndex, cards.length - 1);
      const key = e.key.toLowerCase();
      const arrow = focused >= 0 && (key === "arrowdown" || key === "arrowup");
      if (key === "j" || key === "k" || arrow) {
        e.preventDefault();
        const down = key === "j" || key === "arrowdown";
        // The first J on a fresh page lands on the first card rather than skipping it.
        const next =
          focused < 0 ? current : Math.max(0, Math.min(cards.length - 1, current + (down ? 1 : -1)));
        cards[next]?.focus();
        cards[next]?.scrollIntoView({ block: "nearest" });
        setSelected(next);
        return;
      }
      const answer = KEYS[key];
      const card = cards[current];
      if (!answer || !card || !state.canDecide || state.decide.isPending) return;
      if (Number(card.dataset.expiresAt) <= Date.now()) return;
      if (answer === "session" && card.dataset.sessionGrantable === "false") return;
      e.preventDefault();
      answeredIndex.current = current;
      state.decide.mutate({ approvalId: card.id, answer });
    }
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, []);

  const connected = live.status === "pending";
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Approvals</h1>
          {canDecide ? (
            <p>
              Calls that wait for a human. <kbd>J</kbd>/<kbd>K</kbd> move between requests; <kbd>A</kbd>{" "}
              allows the selected one once, <kbd>S</kbd> for the session, <kbd>D</kbd> denies.
            </p>
          ) : (
            <p>Calls that wait for a human. You can watch the queue; approvers answer it.</p>
          )}
        </div>
        <span className="muted row" data-testid="live-status">
          <span className={`live-dot ${connected ? "" : "off"}`} aria-hidden />{" "}
          {connected ? "live" : live.status}
        </span>
      </div>
      {queue.error && <ErrorNote error={queue.error} />}

      <section aria-labelledby="pending-h" className="stack">
        <h2 id="pending-h">
          Pending <span className="pill">{data.pending.length}</span>
        </h2>
        <div ref={list} className="stack" aria-live="polite">
          {data.pending.length === 0 ? (
            <div className="card empty">
              <strong>No pending approvals</strong>
              Write, execute and external calls in default mode wait here for a decision. Try one in the{" "}
              <Link href="/playground">Playground</Link>.
            </div>
          ) : (
            data.pending.map((a, i) => (
              <ApprovalCard
                key={a.id}
                approval={a}
                canDecide={canDecide}
                decide={decide}
                highlighted={a.id === target}
                selected={canDecide && i === selectedIndex}
                onSelect={() => setSelected(i)}
                onAnswered={() => {
                  answeredIndex.current = i;
                }}
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
          <div className="empty empty-compact">
            {filtered ? (
              <>
                <strong>No decisions match these filters</strong>
                Clear a filter to see more.
              </>
            ) : (
              <>
                <strong>No decisions yet</strong>
                Answered and expired requests move here.
              </>
            )}
          </div>
        ) : (
          <HistoryTable rows={data.history} target={target} />
        )}
      </section>
    </>
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
        <div className="empty empty-compact">
          <strong>No session grants</strong>
          "Allow for session" lets a session repeat a capability without asking; such grants are listed here
          and can be revoked in one action.
        </div>
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
