/**
 * Turns pending approvals into queued deliveries, outside any request path. Each approval's
 * request message and its reminder are claimed by inserting a NotificationClaim row (primary key:
 * approval, kind) in the same batch as the deliveries, so whichever instance inserts first plans
 * it and every other instance's batch fails and plans nothing: one message per request across
 * instances. A burst is grouped: new requests wait until none arrived for `quietMs` (at most
 * `maxWaitMs`) and go out as one message per channel. A channel hears of approvals requested after
 * it was added, not of older ones still waiting: the notifier skips its rounds while no channel is
 * on, and turning one on later does not announce that backlog.
 */
import type { Db } from "../../db";
import { roleAtLeast } from "../roles";
import { filterMatches, parseFilter } from "./filter";

export interface PlannerOptions {
  quietMs: number;
  maxWaitMs: number;
}

export const DEFAULT_PLANNER: PlannerOptions = { quietMs: 300, maxWaitMs: 1_500 };

const REMINDER_MIN_MS = 60_000;
const REMINDER_MAX_MS = 60 * 60_000;

/**
 * When the reminder goes out: a quarter of the approval's lifetime before it expires, between one
 * minute and one hour ahead; none for approvals shorter than four minutes (the first message is
 * still fresh).
 */
export function reminderAt(createdAt: Date, expiresAt: Date): number | null {
  const ttl = expiresAt.getTime() - createdAt.getTime();
  if (ttl < 4 * REMINDER_MIN_MS) return null;
  const lead = Math.min(REMINDER_MAX_MS, Math.max(REMINDER_MIN_MS, ttl / 4));
  return expiresAt.getTime() - lead;
}

interface PendingRow {
  id: string;
  capability: string;
  category: string;
  apiKeyId: string | null;
  createdAt: Date;
  expiresAt: Date;
}

interface Recipient {
  channelId: string;
  /** When the channel was added: it hears of approvals requested since. */
  since: number;
  matches(row: PendingRow): boolean;
}

/** Enabled channels whose owner may answer (approver or admin, not disabled), with their filters. */
async function recipients(db: Db): Promise<Recipient[]> {
  const channels = await db.notificationChannel.findMany({
    where: { enabled: true },
    select: { id: true, userId: true, createdAt: true },
  });
  const userIds = [...new Set(channels.flatMap((c) => (c.userId ? [c.userId] : [])))];
  const [users, prefs] = await Promise.all([
    db.user.findMany({ where: { id: { in: userIds } }, select: { id: true, role: true, disabledAt: true } }),
    db.notificationPreference.findMany({ where: { userId: { in: userIds } } }),
  ]);
  const mayAnswer = new Set(
    users.filter((u) => !u.disabledAt && roleAtLeast(u.role as "viewer", "approver")).map((u) => u.id),
  );
  const filters = new Map(prefs.map((p) => [p.userId, parseFilter(p.filter)]));
  return channels.flatMap((c): Recipient[] => {
    const since = c.createdAt.getTime();
    if (c.userId === null) return [{ channelId: c.id, since, matches: () => true }];
    if (!mayAnswer.has(c.userId)) return [];
    const filter = filters.get(c.userId) ?? parseFilter(null);
    return [{ channelId: c.id, since, matches: (row) => filterMatches(filter, row) }];
  });
}

/**
 * Claims `rows` for `kind` and queues one delivery per channel; false when another instance won,
 * or when no channel is on (the notifier's look at the channels may be a round old: a channel
 * added later hears only of requests made after it, so nothing waits for these).
 */
async function claimAndQueue(db: Db, kind: "request" | "reminder", rows: PendingRow[]): Promise<boolean> {
  const targets = await recipients(db);
  if (targets.length === 0) return false;
  const deliveries = targets.flatMap((t) => {
    const ids = rows.filter((r) => r.createdAt.getTime() >= t.since && t.matches(r)).map((r) => r.id);
    return ids.length ? [{ channelId: t.channelId, kind, approvalIds: JSON.stringify(ids) }] : [];
  });
  try {
    await db.$transaction([
      db.notificationClaim.createMany({ data: rows.map((r) => ({ approvalId: r.id, kind })) }),
      db.notificationDelivery.createMany({ data: deliveries }),
    ]);
    return true;
  } catch (error) {
    // Another instance claimed one of them first: it plans them; the rest come up next round.
    if ((error as { code?: string }).code === "P2002") return false;
    throw error;
  }
}

/** One planning round: new requests (grouped) and due reminders. Returns how many were claimed. */
export async function planDeliveries(
  db: Db,
  now: number,
  options: PlannerOptions = DEFAULT_PLANNER,
): Promise<number> {
  const pending = await db.approval.findMany({
    where: { status: "pending", expiresAt: { gt: new Date(now) } },
    select: { id: true, capability: true, category: true, apiKeyId: true, createdAt: true, expiresAt: true },
    orderBy: { createdAt: "asc" },
    take: 500,
  });
  if (pending.length === 0) return 0;
  const claims = await db.notificationClaim.findMany({
    where: { approvalId: { in: pending.map((p) => p.id) } },
    select: { approvalId: true, kind: true },
  });
  const claimed = new Set(claims.map((c) => `${c.kind}:${c.approvalId}`));
  let planned = 0;

  const fresh = pending.filter((p) => !claimed.has(`request:${p.id}`));
  const newest = fresh.at(-1);
  const oldest = fresh[0];
  if (
    newest &&
    oldest &&
    (now - newest.createdAt.getTime() >= options.quietMs ||
      now - oldest.createdAt.getTime() >= options.maxWaitMs)
  ) {
    if (await claimAndQueue(db, "request", fresh)) planned += fresh.length;
  }

  const due = pending.filter((p) => {
    if (claimed.has(`reminder:${p.id}`) || !claimed.has(`request:${p.id}`)) return false;
    const at = reminderAt(p.createdAt, p.expiresAt);
    return at !== null && at <= now;
  });
  if (due.length && (await claimAndQueue(db, "reminder", due))) planned += due.length;
  return planned;
}
