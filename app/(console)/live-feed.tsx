"use client";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import { isLiveEventType, type LiveEventType } from "@/server/core/event-types";
import { useTRPC } from "../_lib/trpc";

interface FeedItem {
  seq: number;
  type: string;
  text: string;
  at: string;
}

type Payload = Record<string, unknown>;

/** One line for each kind of event the feed knows; the names are checked against the server's. */
const DESCRIBE: { [T in LiveEventType]?: (p: Payload) => string | undefined } = {
  "console.announce": (p) => `${String(p.by)}: ${String(p.text)}`,
  "approval.requested": (p) => {
    const approval = p.approval as { capability?: unknown; requestedBy?: unknown } | undefined;
    return approval && `${String(approval.capability)} asked by ${String(approval.requestedBy)}`;
  },
  "approval.decided": (p) =>
    `${String(p.capability)} ${p.status === "allowed" ? `allowed ${p.scope === "session" ? "for session" : "once"}` : "denied"} by ${String(p.decidedBy)}`,
  "gate.decision": (p) =>
    `${String(p.capability)} → ${String(p.decision)}${p.reason ? ` (${String(p.reason)})` : ""}`,
  "run.finished": (p) => `${p.ok ? "ok" : String(p.errorKind ?? "error")} in ${String(p.durationMs)} ms`,
  "grants.revoked": (p) =>
    `${String(p.count)} session grant${p.count === 1 ? "" : "s"} revoked by ${String(p.by)}`,
  "call.finished": (p) => `${String(p.capability)} ${p.ok ? "returned" : "failed"} after ${String(p.ms)} ms`,
};

function describeEvent(type: string, payload: unknown): string {
  const p = (payload ?? {}) as Payload;
  const known = isLiveEventType(type) ? DESCRIBE[type]?.(p) : undefined;
  if (known !== undefined) return known;
  if (typeof p.capability === "string")
    return `${p.capability}${p.decision ? ` → ${String(p.decision)}` : ""}`;
  if (typeof p.title === "string" && p.title) return p.title;
  return "";
}

/** Every event as it happens, across instances (SSE). */
export function LiveFeed({ since }: { since?: number } = {}) {
  const trpc = useTRPC();
  const [items, setItems] = useState<FeedItem[]>([]);
  // `since` replays the last few events so the feed is not empty on arrival; only the first value
  // counts (a page refresh must not restart the subscription).
  const [from] = useState(since);
  const sub = useSubscription(
    trpc.events.live.subscriptionOptions(from === undefined ? undefined : { lastEventId: String(from) }, {
      onData: (tracked) => {
        const e = tracked.data;
        setItems((prev) =>
          prev.some((i) => i.seq === e.seq)
            ? prev
            : [{ seq: e.seq, type: e.type, text: describeEvent(e.type, e.payload), at: e.at }, ...prev].slice(
                0,
                30,
              ),
        );
      },
    }),
  );
  const connected = sub.status === "pending";
  return (
    <section className="card" style={{ marginTop: 12 }} aria-labelledby="live-h">
      <div className="row" style={{ justifyContent: "space-between" }}>
        <h2 id="live-h">Live activity</h2>
        <span className="muted row" data-testid="live-status">
          <span className={`live-dot ${connected ? "" : "off"}`} aria-hidden />{" "}
          {connected ? "live" : sub.status}
        </span>
      </div>
      {items.length === 0 ? (
        <div className="empty">Gate decisions, approvals and runs appear here as they happen.</div>
      ) : (
        <ul
          className="stack"
          style={{ listStyle: "none", margin: 0, padding: 0 }}
          aria-live="polite"
          data-testid="live-feed"
        >
          {items.map((i) => (
            <li key={i.seq} className="row">
              <span className="muted mono" title={i.at}>
                {new Date(i.at).toLocaleTimeString()}
              </span>
              <span className="pill">{i.type}</span>
              <span>{i.text}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
