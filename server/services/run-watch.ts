/**
 * Follows one action run through the event outbox: its decisions, approvals and calls as they
 * happen, then its stored envelope. Works from any instance and resumes after a reconnect (the
 * caller passes the last seq it saw), so a run that waits minutes on an approval stays watched.
 */
import type { ObservationEnvelope } from "../core/actions/envelope";
import { ENGINE_EVENT_TYPES } from "../core/event-types";
import type { Db } from "../db";
import type { EventBus, LiveEvent } from "../infra/events";
import { getEventBus } from "../infra/live";

/** A run's events: the engine's, but `approval.abandoned`, which comes after its run has died. */
export const RUN_EVENT_TYPES = ENGINE_EVENT_TYPES.filter((type) => type !== "approval.abandoned");

/** The run an engine event belongs to (approval requests carry it inside the summary). */
export function runIdOfEvent(payload: unknown): string | null {
  if (!payload || typeof payload !== "object") return null;
  const p = payload as { runId?: unknown; approval?: { runId?: unknown } };
  if (typeof p.runId === "string") return p.runId;
  if (typeof p.approval?.runId === "string") return p.approval.runId;
  return null;
}

export type RunWatchItem =
  | { kind: "event"; seq: number; type: string; payload: unknown; at: string }
  | {
      kind: "finished";
      seq: number;
      status: string;
      envelope: ObservationEnvelope | null;
    };

async function finishedItem(db: Db, runId: string, seq: number): Promise<RunWatchItem> {
  const run = await db.actionRun.findUnique({
    where: { id: runId },
    select: { status: true, envelope: true },
  });
  let envelope: ObservationEnvelope | null = null;
  try {
    envelope = run?.envelope ? (JSON.parse(run.envelope) as ObservationEnvelope) : null;
  } catch {
    envelope = null;
  }
  return { kind: "finished", seq, status: run?.status ?? "error", envelope };
}

function toItem(event: LiveEvent): RunWatchItem {
  return { kind: "event", seq: event.seq, type: event.type, payload: event.payload, at: event.at };
}

/**
 * Events of `runId` after `afterSeq`, then one `finished` item, then the generator ends. A run
 * that already finished (its events may have been pruned) yields what is left and its envelope.
 */
export async function* watchRun(
  db: Db,
  options: { runId: string; afterSeq: number; signal: AbortSignal; bus?: EventBus },
): AsyncGenerator<RunWatchItem> {
  const { runId, afterSeq, signal } = options;
  const bus = options.bus ?? getEventBus();
  const current = await db.actionRun.findUnique({ where: { id: runId }, select: { status: true } });
  const types: string[] = [...RUN_EVENT_TYPES];
  // A parked (`waiting`) run is not over: it resumes after its approval, so it is followed live.
  if (current && !["running", "queued", "waiting"].includes(current.status)) {
    const rows = await db.event.findMany({
      where: { seq: { gt: afterSeq }, type: { in: types } },
      orderBy: { seq: "asc" },
      take: 2000,
      select: { seq: true, type: true, payload: true, createdAt: true },
    });
    let last = afterSeq;
    for (const row of rows) {
      const payload = JSON.parse(row.payload) as unknown;
      if (runIdOfEvent(payload) !== runId) continue;
      last = row.seq;
      if (row.type === "run.finished") break;
      yield { kind: "event", seq: row.seq, type: row.type, payload, at: row.createdAt.toISOString() };
    }
    yield await finishedItem(db, runId, last);
    return;
  }
  for await (const event of bus.subscribe({ signal, afterSeq, types })) {
    if (runIdOfEvent(event.payload) !== runId) continue;
    if (event.type === "run.finished") {
      yield await finishedItem(db, runId, event.seq);
      return;
    }
    yield toItem(event);
  }
}
