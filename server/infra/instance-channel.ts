/**
 * The instance-to-instance push channel. On PostgreSQL it is LISTEN/NOTIFY on one dedicated
 * connection per process: a writer sends `pg_notify` after its change has committed, and every
 * instance (itself included) hears it at once. It only carries wake-ups (an approval id, a run
 * id, "new outbox rows"); the state stays in the tables, so a lost notification costs latency,
 * never correctness: every listener keeps its poll as the fallback. On SQLite (one process) there
 * is nobody to tell: the no-op channel is used and local wake-ups do the work.
 */

import pg from "pg";
import type { DbTarget } from "../db/provider";
import { pgConfigFromUrl } from "../db/provider";
import { processSingleton } from "./process-singletons";

export type ChannelTopic = "approval" | "event" | "cancel";

export interface InstanceChannel {
  /** Fire and forget; call it only after the change it announces has committed. */
  notify(topic: ChannelTopic, payload?: string): void;
  /** Returns the unsubscribe function. */
  on(topic: ChannelTopic, listener: (payload: string) => void): () => void;
  /** Resolves once the channel listens (immediately for the no-op channel). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

const CHANNEL_PREFIX = "toolstore_";
const RECONNECT_MS = 1_000;

export function createNoopChannel(): InstanceChannel {
  return {
    notify() {},
    on: () => () => {},
    ready: async () => {},
    close: async () => {},
  };
}

/** The channel for a database: LISTEN/NOTIFY on PostgreSQL, no-op on SQLite. */
export function createInstanceChannel(target: DbTarget): InstanceChannel {
  return target.provider === "postgresql" ? createPgChannel(target.url) : createNoopChannel();
}

export function createPgChannel(url: string): InstanceChannel {
  const topics: ChannelTopic[] = ["approval", "event", "cancel"];
  const listeners = new Map<ChannelTopic, Set<(payload: string) => void>>(topics.map((t) => [t, new Set()]));
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  function connect(): Promise<void> {
    if (closed) return Promise.resolve();
    connecting ??= (async () => {
      const next = new pg.Client(pgConfigFromUrl(url));
      next.on("notification", (msg) => {
        const topic = msg.channel.slice(CHANNEL_PREFIX.length) as ChannelTopic;
        for (const fn of listeners.get(topic) ?? []) {
          try {
            fn(msg.payload ?? "");
          } catch {
            // A listener's failure must not stop the others.
          }
        }
      });
      const lost = () => {
        if (client === next) client = undefined;
        next.removeAllListeners("notification");
        if (!closed && !retry) {
          retry = setTimeout(() => {
            retry = undefined;
            void connect().catch(() => undefined);
          }, RECONNECT_MS);
          retry.unref();
        }
      };
      next.on("error", lost);
      next.on("end", lost);
      try {
        await next.connect();
        for (const t of topics) await next.query(`LISTEN ${CHANNEL_PREFIX}${t}`);
        if (closed) {
          await next.end().catch(() => undefined);
          return;
        }
        client = next;
      } catch (error) {
        lost();
        throw error;
      }
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  }

  const started = connect().catch(() => undefined);

  /** Payload-less wake-ups ("new outbox rows") of one tick go out as one NOTIFY. */
  const coalesced = new Set<ChannelTopic>();
  /**
   * NOTIFYs go out one after the other: pg's client queued overlapping queries itself, but warns
   * that pg@9 will not (a DeprecationWarning in every PostgreSQL server's log).
   */
  let sending: Promise<unknown> = Promise.resolve();
  function send(topic: ChannelTopic, payload: string) {
    const to = client;
    if (!to) return;
    sending = sending
      .then(() => to.query("SELECT pg_notify($1, $2)", [`${CHANNEL_PREFIX}${topic}`, payload]))
      .catch(() => undefined);
  }

  return {
    notify(topic, payload = "") {
      if (!client) return;
      if (payload !== "") return send(topic, payload);
      if (coalesced.has(topic)) return;
      coalesced.add(topic);
      setImmediate(() => {
        coalesced.delete(topic);
        send(topic, "");
      });
    },
    on(topic, listener) {
      const set = listeners.get(topic);
      set?.add(listener);
      return () => set?.delete(listener);
    },
    ready: () => started,
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await connecting?.catch(() => undefined);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}

/** The process's channel (one LISTEN connection per process), like the one Prisma client. */
export function processChannel(target: DbTarget): InstanceChannel {
  return processSingleton("instanceChannel", () => createInstanceChannel(target));
}
