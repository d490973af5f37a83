"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import { CategoryBadge } from "@/app/_components/category-badge";
import { ErrorNote } from "@/app/_components/error-note";
import { JsonText } from "@/app/_components/json-view";
import { RelativeTime } from "@/app/_components/relative-time";
import { useTRPC } from "@/app/_lib/trpc";
import type { ApprovalView, listApprovalQueue } from "@/server/services/approval-queue";
import { useDecide } from "../_run/decision-buttons";
import { ApprovalCard } from "./approval-card";

type Queue = Awaited<ReturnType<typeof listApprovalQueue>>;
const LIVE_TYPES = ["approval.requested", "approval.decided", "approval.expired", "grants.revoked"];

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

export function ApprovalsQueue({ initial, canDecide }: { initial: Queue; canDecide: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const queue = useQuery(
    trpc.approvals.queue.queryOptions(undefined, { initialData: initial, staleTime: 0 }),
  );
  const live = useSubscription(
    trpc.events.live.subscriptionOptions(
      { types: LIVE_TYPES },
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
    cards[Math.min(index, cards.length - 1)]?.focus();
    answeredIndex.current = null;
  }, [pendingIds]);

  function move(from: number, delta: 1 | -1) {
    const cards = list.current?.querySelectorAll<HTMLElement>("[data-testid=approval-card]");
    cards?.[Math.max(0, Math.min((cards?.length ?? 1) - 1, from + delta))]?.focus();
  }

  const connected = live.status === "pending";
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Approvals</h1>
          {canDecide ? (
            <p>
              Calls that wait for a human. Focus a card (Tab, or J/K) and press <kbd>A</kbd> allow once,{" "}
              <kbd>S</kbd> allow for session, <kbd>D</kbd> deny.
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
                onMove={(delta) => move(i, delta)}
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
        {data.history.length === 0 ? (
          <div className="empty empty-compact">
            <strong>No decisions yet</strong>
            Answered and expired requests move here.
          </div>
        ) : (
          <History rows={data.history} target={target} />
        )}
      </section>
    </>
  );
}

function outcome(a: ApprovalView): { text: string; className: string } {
  if (a.status === "allowed")
    return {
      text: a.scope === "session" ? "allowed for session" : "allowed once",
      className: "pill pill-ok",
    };
  if (a.status === "denied") return { text: "denied", className: "pill pill-bad" };
  if (a.status === "abandoned") return { text: "abandoned", className: "pill pill-bad" };
  return { text: a.status, className: "pill" };
}

function History({ rows, target }: { rows: ApprovalView[]; target: string | null }) {
  return (
    <table data-testid="approval-history">
      <thead>
        <tr>
          <th>Capability</th>
          <th>Outcome</th>
          <th>Asked by</th>
          <th>Decided</th>
          <th>Arguments</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((a) => {
          const o = outcome(a);
          return (
            <tr key={a.id} id={a.id} className={a.id === target ? "flash" : undefined}>
              <td>
                <code>{a.capability}</code> <CategoryBadge category={a.category} />
              </td>
              <td>
                <span className={o.className}>{o.text}</span>
                {a.endReason && <div className="muted field-hint">{a.endReason}</div>}
              </td>
              <td className="muted">
                {a.requestedBy}
                {a.runId && (
                  <>
                    {" · "}
                    <Link href={`/runs/${a.runId}`}>run</Link>
                  </>
                )}
              </td>
              <td className="muted">
                {a.decidedAt ? (
                  <>
                    {a.decidedBy ? `${a.decidedBy}, ` : ""}
                    <RelativeTime value={a.decidedAt} />
                  </>
                ) : (
                  "nobody answered"
                )}
              </td>
              <td>
                <details>
                  <summary className="muted">show</summary>
                  <JsonText text={a.argsJson} />
                </details>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
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
