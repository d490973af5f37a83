/**
 * The console's Settings → Notifications, as data: the channels a user sees (their own, the team
 * channels, all of them for an admin) with health and recent deliveries, their filter, whether
 * email and push can work here, and who may change which channel.
 */
import { AppError } from "../../core/errors";
import type { Db } from "../../db";
import { loadEnv, publicUrl } from "../../env";
import type { SessionUser } from "../auth";
import { roleAtLeast } from "../roles";
import { getPreference, listChannels, recentDeliveries } from "./channels";
import { sendTestNow } from "./notifier";
import { vapidPublicKey } from "./vapid";

export async function notificationSettings(db: Db, user: SessionUser) {
  const admin = roleAtLeast(user.role, "admin");
  const channels = await listChannels(db, { userId: user.id, all: admin });
  const [filter, pushKey, deliveries, keys] = await Promise.all([
    getPreference(db, user.id),
    vapidPublicKey(db),
    recentDeliveries(
      db,
      channels.map((c) => c.id),
    ),
    db.apiKey.findMany({
      where: { revokedAt: null },
      select: { id: true, name: true },
      orderBy: { name: "asc" },
    }),
  ]);
  return {
    channels,
    filter,
    vapidPublicKey: pushKey,
    emailConfigured: !!loadEnv().TOOLSTORE_SMTP_URL,
    /** A viewer may watch, but is never notified: roles decide who may answer. */
    notified: roleAtLeast(user.role, "approver"),
    canManageTeam: admin,
    deliveries: deliveries.map((d) => ({
      ...d,
      approvalCount: (JSON.parse(d.approvalIds) as string[]).length,
      approvalIds: undefined,
    })),
    keys,
  };
}

/** A user may change their own channels; team channels and others' channels need an admin. */
export async function assertMayManage(db: Db, user: SessionUser, channelId: string): Promise<void> {
  const channel = await db.notificationChannel.findUnique({
    where: { id: channelId },
    select: { userId: true },
  });
  if (!channel) throw new AppError("NOT_FOUND", `no notification channel ${channelId}`);
  if (channel.userId === user.id || roleAtLeast(user.role, "admin")) return;
  throw new AppError("FORBIDDEN", "only an admin may change team channels or another user's channels");
}

export async function testChannel(db: Db, user: SessionUser, channelId: string) {
  await assertMayManage(db, user, channelId);
  const env = loadEnv();
  const error = await sendTestNow(db, channelId, {
    publicUrl: publicUrl(env),
    smtpUrl: env.TOOLSTORE_SMTP_URL ?? null,
    smtpFrom: env.TOOLSTORE_SMTP_FROM,
  });
  return { ok: error === null, error };
}
