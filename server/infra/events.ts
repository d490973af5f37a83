/**
 * Live events for the console. Every event is written to the Event table (the outbox) and
 * every instance tails that table, so a decision made on one instance reaches the SSE views
 * served by another. Tailing only runs while someone listens. With an instance channel
 * (PostgreSQL LISTEN/NOTIFY) a new row wakes every tail at once; the poll stays the fallback.
 * Pruning is not the tail's: every instance's maintenance sweep prunes (server/engine/maintenance),
 * so the outbox stays bounded while no console listens.
 */
import { EventEmitter, on } from "node:events";
import type { Db } from "../db";
import type { InstanceChannel } from "./instance-channel";
import { logger } from "./log";

export interface LiveEvent {
  seq: number;
  type: string;
  payload: unknown;
  at: string;
}

export interface EventBus {
  publish(type: string, payload: unknown): Promise<LiveEvent>;
  /** Events after `afterSeq` (default: from now on), until the signal aborts. */
  subscribe(options: { signal: AbortSignal; afterSeq?: number; types?: string[] }): AsyncGenerator<LiveEvent>;
  /** Stop tailing (tests and shutdown). */
  close(): void;
}

/**
 * The newest event's seq. A page that reads it before its data, and subscribes after it, misses
 * nothing that happened between its render and its subscription.
 */
export async function latestEventSeq(db: Db): Promise<number> {
  const row = await db.event.findFirst({ orderBy: { seq: "desc" }, select: { seq: true } });
  return row?.seq ?? 0;
}

/**
 * Removes the outbox's events from before `cutoff`. By sequence number, since createdAt has no
 * index (one B-tree fewer in every commit that publishes): the first event since `cutoff`, found by
 * reading up from the oldest, bounds the delete. Sequence numbers follow insert order, and so, up to
 * the clock skew of the instances, do the times.
 */
export async function pruneEvents(db: Db, cutoff: Date): Promise<number> {
  const kept = await db.event.findFirst({
    where: { createdAt: { gte: cutoff } },
    orderBy: { seq: "asc" },
    select: { seq: true },
  });
  const { count } = await db.event.deleteMany({
    where: kept ? { seq: { lt: kept.seq } } : { createdAt: { lt: cutoff } },
  });
  return count;
}

const POLL_MS = 150;
/** How long the outbox keeps an event: the instances' maintenance sweep prunes older ones. */
export const EVENT_KEEP_MS = 24 * 60 * 60 * 1000;
/**
 * PostgreSQL hands out sequence numbers at insert and makes rows visible at commit, so seq 8 can
 * be readable while seq 7's transaction is still open. A tail that moved past 7 would never see
 * it: hold at a gap this long before treating it as a rolled-back insert.
 */
const GAP_WAIT_MS = 1_000;

export function createEventBus(
  db: Db,
  options: { pollMs?: number; channel?: InstanceChannel } = {},
): EventBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const pollMs = options.pollMs ?? POLL_MS;
  let lastSeq = -1;
  let listeners = 0;
  let timer: NodeJS.Timeout | undefined;
  let polling = false;
  let gapSince: number | undefined;

  const latestSeq = () => latestEventSeq(db);

  let again = false;

  async function poll() {
    if (polling) {
      // A wake-up during a read: read once more right after, not a tick later.
      again = true;
      return;
    }
    again = false;
    polling = true;
    try {
      if (lastSeq < 0) lastSeq = await latestSeq();
      const rows = await db.event.findMany({
        where: { seq: { gt: lastSeq } },
        orderBy: { seq: "asc" },
        take: 500,
      });
      for (const row of rows) {
        if (row.seq !== lastSeq + 1) {
          gapSince ??= Date.now();
          if (Date.now() - gapSince < GAP_WAIT_MS) break;
        }
        gapSince = undefined;
        lastSeq = row.seq;
        emitter.emit("event", toLive(row));
      }
    } catch (error) {
      logger("events").error(`events: tail failed: ${error instanceof Error ? error.message : error}`);
    } finally {
      polling = false;
      if (again && listeners > 0) void poll();
    }
  }

  const offChannel = options.channel?.on("event", () => {
    if (listeners > 0) void poll();
  });

  function retain() {
    listeners += 1;
    if (!timer) {
      timer = setInterval(poll, pollMs);
      timer.unref();
    }
  }

  function release() {
    listeners -= 1;
    if (listeners <= 0 && timer) {
      clearInterval(timer);
      timer = undefined;
      lastSeq = -1;
      gapSince = undefined;
    }
  }

  return {
    async publish(type, payload) {
      const row = await db.event.create({ data: { type, payload: JSON.stringify(payload ?? null) } });
      options.channel?.notify("event");
      // Wake the tail at once instead of waiting for the next tick.
      if (listeners > 0) void poll();
      return toLive(row);
    },

    async *subscribe({ signal, afterSeq, types }) {
      retain();
      // Listen before reading the backlog: `on` buffers, so nothing emitted meanwhile is lost.
      const live = on(emitter, "event", { signal }) as AsyncIterableIterator<[LiveEvent]>;
      try {
        const start = afterSeq ?? (await latestSeq());
        // A fresh tail starts where this subscriber starts, not at whatever is newest by its first tick.
        if (lastSeq < 0) lastSeq = start;
        const backlog = await db.event.findMany({
          where: { seq: { gt: start } },
          orderBy: { seq: "asc" },
          take: 500,
        });
        let seen = start;
        for (const row of backlog) {
          seen = row.seq;
          if (!types || types.includes(row.type)) yield toLive(row);
        }
        for await (const [event] of live) {
          if (event.seq <= seen) continue;
          seen = event.seq;
          if (!types || types.includes(event.type)) yield event;
        }
      } catch (error) {
        if (!signal.aborted) throw error;
      } finally {
        await live.return?.();
        release();
      }
    },

    close() {
      offChannel?.();
      if (timer) clearInterval(timer);
      timer = undefined;
      emitter.removeAllListeners();
    },
  };
}

function toLive(row: { seq: number; type: string; payload: string; createdAt: Date }): LiveEvent {
  return { seq: row.seq, type: row.type, payload: JSON.parse(row.payload), at: row.createdAt.toISOString() };
}
