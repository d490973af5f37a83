/**
 * Notification channels and preferences as stored: add a webhook (json | slack | ntfy, with an
 * optional signing secret), an email address or one browser's push subscription; list them with
 * their health (last error, last success) and never their secrets; remove; each user's filter.
 * Secrets and push keys are sealed with the database's secret box, like toolset secrets.
 */
import { AppError } from "../../core/errors";
import type { Db } from "../../db";
import { channelSecretContext, secretBoxFor } from "../stored-secrets";
import { DEFAULT_FILTER, type NotificationFilter, parseFilter, validateFilter } from "./filter";
import { WEBHOOK_FORMATS, type WebhookFormat } from "./payloads";

export const CHANNEL_KINDS = ["webhook", "email", "push"] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

const channelSelect = {
  id: true,
  kind: true,
  name: true,
  userId: true,
  format: true,
  target: true,
  enabled: true,
  lastError: true,
  lastErrorAt: true,
  lastOkAt: true,
  createdAt: true,
  sealed: true,
} as const;

export interface ChannelView {
  id: string;
  kind: string;
  name: string;
  userId: string | null;
  format: string | null;
  /** The webhook URL with its path shortened, the email address, or the push service's host. */
  target: string;
  signed: boolean;
  enabled: boolean;
  lastError: string | null;
  lastErrorAt: Date | null;
  lastOkAt: Date | null;
  createdAt: Date;
}

/** Webhook URLs often carry their credential in the path (Slack, ntfy topics): show only the start. */
function displayTarget(kind: string, target: string): string {
  if (kind === "email") return target;
  try {
    const u = new URL(target);
    if (kind === "push") return u.host;
    const path = u.pathname.length > 12 ? `${u.pathname.slice(0, 12)}…` : u.pathname;
    return `${u.protocol}//${u.host}${path}`;
  } catch {
    return target.slice(0, 24);
  }
}

function toView(row: {
  id: string;
  kind: string;
  name: string;
  userId: string | null;
  format: string | null;
  target: string;
  enabled: boolean;
  lastError: string | null;
  lastErrorAt: Date | null;
  lastOkAt: Date | null;
  createdAt: Date;
  sealed: string | null;
}): ChannelView {
  const { sealed, target, ...rest } = row;
  return { ...rest, target: displayTarget(row.kind, target), signed: row.kind === "webhook" && !!sealed };
}

export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError("BAD_INPUT", `webhook URL "${raw}" is not a URL: use https://host/path`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new AppError(
      "BAD_INPUT",
      `webhook URL must start with https:// (or http:// on a local network), not ${url.protocol}`,
    );
  }
  return url;
}

function uniqueTaken(error: unknown): boolean {
  return (error as { code?: string }).code === "P2002";
}

async function createChannel(
  db: Db,
  data: {
    kind: ChannelKind;
    name: string;
    userId: string | null;
    format: string | null;
    target: string;
    secret: string | null;
  },
): Promise<ChannelView> {
  const box = data.secret ? await secretBoxFor(db) : null;
  const sealed =
    box && data.secret ? box.seal(data.secret, channelSecretContext(data.kind, data.target)) : null;
  try {
    const row = await db.notificationChannel.create({
      data: {
        kind: data.kind,
        name: data.name,
        userId: data.userId,
        format: data.format,
        target: data.target,
        sealed,
      },
      select: channelSelect,
    });
    return toView(row);
  } catch (error) {
    if (uniqueTaken(error))
      throw new AppError("CONFLICT", `this ${data.kind} channel is already added (same target)`);
    throw error;
  }
}

export interface WebhookInput {
  url: string;
  format?: WebhookFormat;
  secret?: string | null;
  name?: string;
  /** The owner (their filter applies); null for a team channel told of every request. */
  userId?: string | null;
}

export function addWebhook(db: Db, input: WebhookInput): Promise<ChannelView> {
  const url = parseWebhookUrl(input.url.trim());
  const format = input.format ?? "json";
  if (!WEBHOOK_FORMATS.includes(format)) {
    throw new AppError(
      "BAD_INPUT",
      `unknown webhook format "${format}": use one of ${WEBHOOK_FORMATS.join(", ")}`,
    );
  }
  const secret = input.secret?.trim() || null;
  if (secret && secret.length < 16)
    throw new AppError("BAD_INPUT", "a webhook secret needs at least 16 characters");
  return createChannel(db, {
    kind: "webhook",
    name: input.name?.trim() || `${format} webhook ${url.host}`,
    userId: input.userId ?? null,
    format,
    target: url.toString(),
    secret,
  });
}

const EMAIL = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/;

export function addEmail(db: Db, input: { address: string; userId: string }): Promise<ChannelView> {
  const address = input.address.trim();
  if (!EMAIL.test(address)) throw new AppError("BAD_INPUT", `"${address}" is not an email address`);
  return createChannel(db, {
    kind: "email",
    name: address,
    userId: input.userId,
    format: null,
    target: address,
    secret: null,
  });
}

export interface PushSubscriptionInput {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  /** "Chrome on Android": what the device list shows. */
  deviceName: string;
  userId: string;
}

/** Turns push on for one device; the same endpoint again (a re-subscribe) replaces the old row. */
export async function addPushSubscription(db: Db, input: PushSubscriptionInput): Promise<ChannelView> {
  const url = parseWebhookUrl(input.endpoint);
  if (!input.keys.p256dh || !input.keys.auth)
    throw new AppError("BAD_INPUT", "a push subscription needs its p256dh and auth keys");
  await db.notificationChannel.deleteMany({ where: { kind: "push", target: url.toString() } });
  return createChannel(db, {
    kind: "push",
    name: input.deviceName.slice(0, 80) || "browser",
    userId: input.userId,
    format: null,
    target: url.toString(),
    secret: JSON.stringify(input.keys),
  });
}

/** Channels a user sees: their own and the team channels (admins see all). */
export async function listChannels(
  db: Db,
  viewer: { userId: string | null; all: boolean },
): Promise<ChannelView[]> {
  const rows = await db.notificationChannel.findMany({
    where: viewer.all ? {} : { OR: [{ userId: viewer.userId }, { userId: null }] },
    orderBy: { createdAt: "asc" },
    select: channelSelect,
  });
  return rows.map(toView);
}

export async function findChannel(db: Db, idOrPrefix: string) {
  const rows = await db.notificationChannel.findMany({
    where: { id: { startsWith: idOrPrefix } },
    select: channelSelect,
    take: 2,
  });
  if (rows.length === 0)
    throw new AppError("NOT_FOUND", `no notification channel ${idOrPrefix}: see \`notifications list\``);
  if (rows.length > 1)
    throw new AppError("BAD_INPUT", `"${idOrPrefix}" names more than one channel: give more of its id`);
  return rows[0] as NonNullable<(typeof rows)[0]>;
}

/** Whether the push endpoint of this device is on (the console's per-device toggle). */
export async function pushEnabledFor(db: Db, endpoint: string): Promise<boolean> {
  return (
    (await db.notificationChannel.count({ where: { kind: "push", target: endpoint, enabled: true } })) > 0
  );
}

export async function removeChannel(db: Db, id: string): Promise<void> {
  const { count } = await db.notificationChannel.deleteMany({ where: { id } });
  if (count === 0) throw new AppError("NOT_FOUND", `no notification channel ${id}`);
}

export async function removePushEndpoint(db: Db, endpoint: string, userId: string): Promise<number> {
  const { count } = await db.notificationChannel.deleteMany({
    where: { kind: "push", target: endpoint, userId },
  });
  return count;
}

export async function getPreference(db: Db, userId: string): Promise<NotificationFilter> {
  const row = await db.notificationPreference.findUnique({ where: { userId } });
  return row ? parseFilter(row.filter) : DEFAULT_FILTER;
}

export async function setPreference(db: Db, userId: string, input: unknown): Promise<NotificationFilter> {
  const filter = validateFilter(input);
  const text = JSON.stringify(filter);
  await db.notificationPreference.upsert({
    where: { userId },
    create: { userId, filter: text },
    update: { filter: text },
  });
  return filter;
}

/** Recent deliveries of a channel: channel, kind, status, time, attempts, error — never contents. */
export function recentDeliveries(db: Db, channelIds: string[], take = 20) {
  return db.notificationDelivery.findMany({
    where: { channelId: { in: channelIds } },
    orderBy: { createdAt: "desc" },
    take,
    select: {
      id: true,
      channelId: true,
      kind: true,
      status: true,
      attempts: true,
      lastError: true,
      sentAt: true,
      createdAt: true,
      approvalIds: true,
    },
  });
}

/** Queues a test message for a channel (sent by the notifier like any other). */
export async function queueTest(db: Db, channelId: string): Promise<string> {
  const row = await db.notificationDelivery.create({
    data: { channelId, kind: "test" },
    select: { id: true },
  });
  return row.id;
}
