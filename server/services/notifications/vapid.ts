/**
 * The VAPID key pair Web Push is signed with: created at first start, kept in the Setting table
 * with the private key sealed by the secret box. Two instances starting at once agree on one pair
 * (the first insert wins; the other reads it back).
 */
import webpush from "web-push";
import type { Db } from "../../db";
import { secretBoxFor, VAPID_CONTEXT, VAPID_SETTING } from "../stored-secrets";

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

interface Stored {
  publicKey: string;
  privateKey: string;
}

async function read(db: Db): Promise<VapidKeys | null> {
  const row = await db.setting.findUnique({ where: { key: VAPID_SETTING } });
  if (!row) return null;
  const stored = JSON.parse(row.value) as Stored;
  const box = await secretBoxFor(db);
  return { publicKey: stored.publicKey, privateKey: box.open(stored.privateKey, VAPID_CONTEXT) };
}

export async function ensureVapidKeys(db: Db): Promise<VapidKeys> {
  const existing = await read(db);
  if (existing) return existing;
  const keys = webpush.generateVAPIDKeys();
  const box = await secretBoxFor(db);
  const value = JSON.stringify({
    publicKey: keys.publicKey,
    privateKey: box.seal(keys.privateKey, VAPID_CONTEXT),
  });
  try {
    await db.setting.create({ data: { key: VAPID_SETTING, value } });
    return keys;
  } catch (error) {
    if ((error as { code?: string }).code !== "P2002") throw error;
    const winner = await read(db);
    if (!winner) throw error;
    return winner;
  }
}

/** The public key browsers subscribe with (null before the first start made one). */
export async function vapidPublicKey(db: Db): Promise<string | null> {
  const row = await db.setting.findUnique({ where: { key: VAPID_SETTING } });
  return row ? (JSON.parse(row.value) as Stored).publicKey : null;
}
