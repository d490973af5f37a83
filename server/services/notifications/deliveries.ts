/**
 * The delivery queue's worker: claims due rows by compare-and-set (a row is sent by one instance
 * at a time; a claim left by a dead instance lapses after `claimMs`), sends them without holding
 * up the next round, and records the outcome: sent, or retried with exponential backoff, or
 * failed after the last attempt or when a push subscription is gone. A message for approvals no
 * longer pending is skipped. The channel keeps its last error and last success for the console.
 */
import type { Db } from "../../db";
import { channelSecretContext, secretBoxFor } from "../stored-secrets";
import { type ApprovalForMessage, buildMessage, type MessageKind, type Requester } from "./message";
import { SendError, sendOverChannel, type TransportConfig } from "./transport";

export interface DeliveryWorkerOptions {
  db: Db;
  instanceId: string;
  publicUrl: string;
  transport: () => TransportConfig;
  now?: () => number;
  /** First retry after this long, doubling each time (with jitter). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  maxAttempts?: number;
  claimMs?: number;
  /** Sends in flight at once on this instance. */
  concurrency?: number;
  /** Told each send's outcome by channel kind (the metrics count deliveries). */
  onOutcome?: (channelKind: string, ok: boolean) => void;
}

export interface DeliveryWorker {
  /** Claims due deliveries and starts sending them; resolves once they are claimed, not sent. */
  tick(): Promise<number>;
  /** Resolves when every send started so far has finished. */
  drain(): Promise<void>;
  /** Sends one delivery this worker already holds (status sending, claimed by its instance). */
  sendClaimed(delivery: {
    id: string;
    channelId: string;
    kind: string;
    approvalIds: string;
    attempts: number;
  }): Promise<void>;
}

const DEFAULTS = {
  retryBaseMs: 2_000,
  retryMaxMs: 10 * 60_000,
  maxAttempts: 8,
  claimMs: 60_000,
  concurrency: 8,
};

export function backoffMs(attempts: number, baseMs: number, maxMs: number): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(exp * (0.8 + Math.random() * 0.4));
}

/** Who asked, as a message names them: the key, the MCP client's name and the key's owner. */
async function requestersOf(db: Db, rows: ApprovalForMessage[] & { sessionId?: string }[]) {
  const keyIds = [...new Set(rows.flatMap((r) => (r.apiKeyId ? [r.apiKeyId] : [])))];
  const sessionIds = [
    ...new Set(
      rows.flatMap((r) => {
        const id = (r as { sessionId?: string }).sessionId ?? "";
        return id.startsWith("mcp:") ? [id.slice(4)] : [];
      }),
    ),
  ];
  const [keys, sessions] = await Promise.all([
    db.apiKey.findMany({
      where: { id: { in: keyIds } },
      select: { id: true, name: true, user: { select: { displayName: true } } },
    }),
    db.mcpSession.findMany({ where: { id: { in: sessionIds } }, select: { id: true, clientName: true } }),
  ]);
  const keyById = new Map(keys.map((k) => [k.id, k]));
  const clientById = new Map(sessions.map((s) => [s.id, s.clientName]));
  return (row: ApprovalForMessage): Requester => {
    const key = row.apiKeyId ? keyById.get(row.apiKeyId) : undefined;
    const sessionId = (row as { sessionId?: string }).sessionId ?? "";
    return {
      keyName: key?.name ?? null,
      ownerName: key?.user.displayName ?? null,
      clientName: (sessionId.startsWith("mcp:") && clientById.get(sessionId.slice(4))) || null,
    };
  };
}

/** The message of a delivery, or null when none of its approvals is still pending (a test always has one). */
async function messageFor(
  db: Db,
  delivery: { kind: string; approvalIds: string },
  publicUrl: string,
  now: number,
): Promise<ReturnType<typeof buildMessage> | null> {
  const kind = delivery.kind as MessageKind;
  const ids = JSON.parse(delivery.approvalIds) as string[];
  const all = ids.length ? await db.approval.findMany({ where: { id: { in: ids } } }) : [];
  const rows =
    kind === "test" ? all : all.filter((r) => r.status === "pending" && r.expiresAt.getTime() > now);
  if (kind !== "test" && rows.length === 0) return null;
  const requester = await requestersOf(db, rows);
  return buildMessage({
    kind,
    rows: rows.map((row) => ({ row, requester: requester(row) })),
    publicUrl,
    now,
  });
}

export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { db, instanceId, publicUrl } = options;
  const cfg = {
    ...DEFAULTS,
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  } as typeof DEFAULTS;
  const now = options.now ?? Date.now;
  const inFlight = new Set<Promise<void>>();

  type Claimed = { id: string; channelId: string; kind: string; approvalIds: string; attempts: number };

  async function claimDue(limit: number): Promise<Claimed[]> {
    const at = new Date(now());
    const candidates = await db.notificationDelivery.findMany({
      where: {
        OR: [
          { status: "queued", nextAttemptAt: { lte: at } },
          { status: "sending", claimedUntil: { lt: at } },
        ],
      },
      orderBy: { nextAttemptAt: "asc" },
      take: limit,
      select: {
        id: true,
        channelId: true,
        kind: true,
        approvalIds: true,
        attempts: true,
        status: true,
        claimedBy: true,
      },
    });
    const mine: Claimed[] = [];
    for (const c of candidates) {
      const { count } = await db.notificationDelivery.updateMany({
        where: { id: c.id, status: c.status, attempts: c.attempts, claimedBy: c.claimedBy },
        data: { status: "sending", claimedBy: instanceId, claimedUntil: new Date(now() + cfg.claimMs) },
      });
      if (count === 1) mine.push(c);
    }
    return mine;
  }

  async function finish(id: string, data: Parameters<Db["notificationDelivery"]["updateMany"]>[0]["data"]) {
    await db.notificationDelivery.updateMany({
      where: { id, claimedBy: instanceId, status: "sending" },
      data,
    });
  }

  async function send(delivery: Claimed): Promise<void> {
    const channel = await db.notificationChannel.findUnique({ where: { id: delivery.channelId } });
    if (!channel) return; // removed meanwhile; its deliveries went with it
    if (!channel.enabled) {
      await finish(delivery.id, { status: "skipped", lastError: "the channel is turned off" });
      return;
    }
    const message = await messageFor(db, delivery, publicUrl, now());
    if (!message) {
      await finish(delivery.id, { status: "skipped", lastError: "already answered or expired" });
      return;
    }
    const secret = channel.sealed
      ? (await secretBoxFor(db)).open(channel.sealed, channelSecretContext(channel.kind, channel.target))
      : null;
    const attempts = delivery.attempts + 1;
    try {
      await sendOverChannel({ ...channel, secret }, message, options.transport(), new Date(now()));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const gone = error instanceof SendError && error.gone && channel.kind === "push";
      const last = gone || attempts >= cfg.maxAttempts;
      options.onOutcome?.(channel.kind, false);
      await finish(delivery.id, {
        status: last ? "failed" : "queued",
        attempts,
        lastError: reason.slice(0, 500),
        claimedBy: null,
        claimedUntil: null,
        nextAttemptAt: new Date(now() + backoffMs(attempts, cfg.retryBaseMs, cfg.retryMaxMs)),
      });
      await db.notificationChannel.updateMany({
        where: { id: channel.id },
        data: {
          lastError: gone
            ? `${reason} (the subscription is gone: turn push on again on that device)`
            : reason.slice(0, 500),
          lastErrorAt: new Date(now()),
          ...(gone ? { enabled: false } : {}),
        },
      });
      return;
    }
    options.onOutcome?.(channel.kind, true);
    await finish(delivery.id, {
      status: "sent",
      attempts,
      sentAt: new Date(now()),
      lastError: null,
      claimedUntil: null,
    });
    await db.notificationChannel.updateMany({
      where: { id: channel.id },
      data: { lastOkAt: new Date(now()), lastError: null, lastErrorAt: null },
    });
  }

  function start(delivery: Claimed) {
    const task = send(delivery)
      .catch(async (error: unknown) => {
        // A failure outside the channel (database, secret box): retried like a failed send.
        const reason = error instanceof Error ? error.message : String(error);
        await finish(delivery.id, {
          status: "queued",
          attempts: delivery.attempts + 1,
          lastError: `internal: ${reason}`.slice(0, 500),
          claimedBy: null,
          nextAttemptAt: new Date(now() + backoffMs(delivery.attempts + 1, cfg.retryBaseMs, cfg.retryMaxMs)),
        }).catch(() => undefined);
      })
      .finally(() => inFlight.delete(task));
    inFlight.add(task);
  }

  return {
    async tick() {
      const room = cfg.concurrency - inFlight.size;
      if (room <= 0) return 0;
      const claimed = await claimDue(room);
      for (const d of claimed) start(d);
      return claimed.length;
    },
    async sendClaimed(delivery) {
      start(delivery);
      await this.drain();
    },
    async drain() {
      while (inFlight.size) await Promise.allSettled([...inFlight]);
    },
  };
}
