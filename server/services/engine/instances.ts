/**
 * Which server processes are alive: each instance writes a heartbeat row (Setting
 * `instance:<id>`) every few seconds. Recovery treats an instance without a fresh heartbeat as
 * gone, so the runs it left "running" and their approvals are closed, never executed later.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Db } from "../../db";

export const HEARTBEAT_MS = 10_000;
/** An instance whose heartbeat is older than this is considered gone. */
export const INSTANCE_TIMEOUT_MS = 35_000;

const key = (instanceId: string) => `instance:${instanceId}`;

export function newInstanceId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

export async function heartbeat(db: Db, instanceId: string, now = Date.now()): Promise<void> {
  const value = new Date(now).toISOString();
  await db.setting.upsert({
    where: { key: key(instanceId) },
    create: { key: key(instanceId), value },
    update: { value },
    select: { key: true },
  });
}

export async function isInstanceAlive(db: Db, instanceId: string, now = Date.now()): Promise<boolean> {
  const row = await db.setting.findUnique({ where: { key: key(instanceId) }, select: { value: true } });
  if (!row) return false;
  const at = Date.parse(row.value);
  return Number.isFinite(at) && now - at < INSTANCE_TIMEOUT_MS;
}

/** Removes heartbeat rows of instances gone for a day (they accumulate across restarts). */
export async function pruneInstances(db: Db, now = Date.now()): Promise<void> {
  const rows = await db.setting.findMany({
    where: { key: { startsWith: "instance:" } },
    select: { key: true, value: true },
  });
  const stale = rows.filter((r) => now - Date.parse(r.value) > 24 * 60 * 60_000).map((r) => r.key);
  if (stale.length > 0) await db.setting.deleteMany({ where: { key: { in: stale } } });
}
