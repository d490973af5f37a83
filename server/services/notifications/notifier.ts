/**
 * The notifier an instance runs beside its engine: every `tickMs` it plans deliveries for new
 * and soon-expiring approvals (./planner.ts) and sends what is due (./deliveries.ts). It reads
 * the Approval table and its own tables only; the gate never waits for it, and a failing channel
 * never touches an approval. Started by the composition root (server/engine).
 */
import type { Db } from "../../db";
import { createDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from "./deliveries";
import { DEFAULT_PLANNER, type PlannerOptions, planDeliveries } from "./planner";
import type { TransportConfig } from "./transport";
import { ensureVapidKeys } from "./vapid";

export interface NotifierConfig {
  publicUrl: string;
  smtpUrl?: string | null;
  smtpFrom?: string;
  tickMs?: number;
  planner?: PlannerOptions;
  retryBaseMs?: number;
  maxAttempts?: number;
  /** Told each send's outcome by channel kind (the metrics count deliveries). */
  onOutcome?: (channelKind: string, ok: boolean) => void;
}

export interface Notifier {
  /** One planning and sending round (tests); the timer runs it too. */
  tick(): Promise<void>;
  /** Waits for the sends in flight. */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

const DEFAULT_TICK_MS = 400;
/**
 * While no channel is turned on, a round asks only that, every this many ticks (2 s at the
 * default), instead of reading the pending approvals and the due deliveries every tick: an install
 * without channels made five queries a second for nothing (their CPU was within the noise of
 * idle `npm start`, 160-190 ms of the main thread per 30 s either way; on PostgreSQL each instance
 * sent them to the shared server).
 */
const CHANNEL_RECHECK_TICKS = 5;
const PRUNE_EVERY_MS = 60 * 60_000;
const KEEP_DELIVERIES_MS = 30 * 24 * 60 * 60_000;
const KEEP_CLAIMS_MS = 8 * 24 * 60 * 60_000;

/** "https://…" when the console is served over TLS (push services prefer it), else a mailto contact. */
function vapidSubject(publicUrl: string, from: string): string {
  if (publicUrl.startsWith("https://")) return publicUrl;
  const address = /<([^>]+)>/.exec(from)?.[1] ?? from;
  return `mailto:${address}`;
}

async function prune(db: Db, now: number): Promise<void> {
  await db.notificationDelivery.deleteMany({
    where: {
      createdAt: { lt: new Date(now - KEEP_DELIVERIES_MS) },
      status: { in: ["sent", "failed", "skipped"] },
    },
  });
  await db.notificationClaim.deleteMany({ where: { createdAt: { lt: new Date(now - KEEP_CLAIMS_MS) } } });
}

/** SMTP and VAPID settings for sending (the VAPID pair is created on first use). */
export async function transportConfigFor(
  db: Db,
  config: Pick<NotifierConfig, "publicUrl" | "smtpUrl" | "smtpFrom">,
): Promise<TransportConfig> {
  const vapid = await ensureVapidKeys(db);
  const smtpFrom = config.smtpFrom ?? "ToolStore <toolstore@localhost>";
  return {
    smtpUrl: config.smtpUrl ?? null,
    smtpFrom,
    vapid: { ...vapid, subject: vapidSubject(config.publicUrl, smtpFrom) },
  };
}

/**
 * Sends a test message over one channel now and records it like any delivery; returns the
 * error text, or null when the receiver accepted it. The console's and the CLI's "send a test".
 */
export async function sendTestNow(
  db: Db,
  channelId: string,
  config: Pick<NotifierConfig, "publicUrl" | "smtpUrl" | "smtpFrom">,
): Promise<string | null> {
  const transport = await transportConfigFor(db, config);
  const worker = createDeliveryWorker({
    db,
    instanceId: "test-now",
    publicUrl: config.publicUrl,
    transport: () => transport,
    maxAttempts: 1,
  });
  const delivery = await db.notificationDelivery.create({
    data: {
      channelId,
      kind: "test",
      status: "sending",
      claimedBy: "test-now",
      claimedUntil: new Date(Date.now() + 60_000),
    },
  });
  await worker.sendClaimed(delivery);
  const done = await db.notificationDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
  return done.status === "sent" ? null : (done.lastError ?? done.status);
}

export async function startNotifier(db: Db, instanceId: string, config: NotifierConfig): Promise<Notifier> {
  const transport = await transportConfigFor(db, config);
  const workerOptions: DeliveryWorkerOptions = {
    db,
    instanceId,
    publicUrl: config.publicUrl,
    transport: () => transport,
    ...(config.retryBaseMs ? { retryBaseMs: config.retryBaseMs } : {}),
    ...(config.maxAttempts ? { maxAttempts: config.maxAttempts } : {}),
    ...(config.onOutcome ? { onOutcome: config.onOutcome } : {}),
  };
  const worker: DeliveryWorker = createDeliveryWorker(workerOptions);
  let lastPrune = 0;
  let busy = false;
  let stopped = false;
  const tickMs = config.tickMs ?? DEFAULT_TICK_MS;
  let channelsAskedAt = Number.NEGATIVE_INFINITY;
  let anyChannel = false;

  /** Whether a channel is turned on (asked at most every CHANNEL_RECHECK_TICKS ticks). */
  async function channelsOn(now: number): Promise<boolean> {
    if (now - channelsAskedAt < CHANNEL_RECHECK_TICKS * tickMs) return anyChannel;
    anyChannel =
      (await db.notificationChannel.findFirst({ where: { enabled: true }, select: { id: true } })) !== null;
    channelsAskedAt = now;
    return anyChannel;
  }

  /**
   * The timer's round: nothing to plan or send while no channel is on. A channel hears of
   * approvals requested after it was added (planner.ts), so none is lost by skipping.
   */
  async function timedRound() {
    if (!(await channelsOn(Date.now()))) return;
    await round();
  }

  async function round() {
    const now = Date.now();
    await planDeliveries(db, now, config.planner ?? DEFAULT_PLANNER);
    await worker.tick();
    if (now - lastPrune > PRUNE_EVERY_MS) {
      lastPrune = now;
      await prune(db, now);
    }
  }

  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    timedRound()
      .catch((error: unknown) => {
        console.error(`notifications: round failed: ${error instanceof Error ? error.message : error}`);
      })
      .finally(() => {
        busy = false;
      });
  }, tickMs);
  timer.unref();

  return {
    tick: round,
    drain: () => worker.drain(),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await worker.drain();
    },
  };
}
