/**
 * Which server processes are alive. Each process (one boot) has its own instance id and writes a
 * heartbeat row (Setting `instance:<id>`, JSON `{ at, address }`) every `heartbeatMs`. An
 * instance that missed two heartbeats is dead, and recovery on any other instance closes the runs
 * it left running. A process that restarts on the same address (host:port) is the same instance
 * come back: at start it retires its predecessors' rows, so their runs are finalized at once
 * instead of after the timeout.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Db } from "../db";

export const DEFAULT_HEARTBEAT_MS = 2_000;

/** Two missed heartbeats, and half a beat of slack for a slow write. */
export function instanceTimeoutMs(heartbeatMs: number): number {
  return Math.round(heartbeatMs * 2.5);
}

const PREFIX = "instance:";
const key = (instanceId: string) => `${PREFIX}${instanceId}`;

export function newInstanceId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

/** Where a process serves: restarts of one deployment slot share it. */
export function instanceAddress(host: string, port: number): string {
  return `${hostname()}|${host}:${port}`;
}

interface Beat {
  at: number;
  address: string | null;
  host: string | null;
  pid: number | null;
}

function parseBeat(value: string): Beat {
  if (value.startsWith("{")) {
    try {
      const v = JSON.parse(value) as { at?: unknown; address?: unknown; host?: unknown; pid?: unknown };
      return {
        at: typeof v.at === "number" ? v.at : Number.NaN,
        address: typeof v.address === "string" ? v.address : null,
        host: typeof v.host === "string" ? v.host : null,
        pid: typeof v.pid === "number" ? v.pid : null,
      };
    } catch {
      return { at: Number.NaN, address: null, host: null, pid: null };
    }
  }
  // Rows written before addresses were recorded hold an ISO date.
  return { at: Date.parse(value), address: null, host: null, pid: null };
}

export async function heartbeat(
  db: Db,
  instanceId: string,
  options: { address?: string | null; now?: number } = {},
): Promise<void> {
  const value = JSON.stringify({
    at: options.now ?? Date.now(),
    address: options.address ?? null,
    host: hostname(),
    pid: process.pid,
  });
  await db.setting.upsert({
    where: { key: key(instanceId) },
    create: { key: key(instanceId), value },
    update: { value },
    select: { key: true },
  });
}

/** Clocks of two hosts may disagree by this much before a live instance could look dead. */
export const CLOCK_SKEW_TOLERANCE_MS = 30_000;

/**
 * Liveness as one instance sees the others. A heartbeat younger than the timeout (by this
 * host's clock) is alive. An older one is still alive while its value keeps changing (the writer's
 * clock is behind ours), and dead once this process has seen it unchanged for the timeout, or
 * when it is older than the skew tolerance. So clocks that agree give the exact two-beat bound,
 * and a skewed host is never declared dead while it beats.
 */
export function createLivenessCheck(db: Db, timeoutMs: number, now: () => number = Date.now) {
  const seen = new Map<string, { value: string; at: number }>();
  return async function isInstanceAlive(instanceId: string): Promise<boolean> {
    const row = await db.setting.findUnique({ where: { key: key(instanceId) }, select: { value: true } });
    const t = now();
    if (!row) {
      seen.delete(instanceId);
      return false;
    }
    const { at } = parseBeat(row.value);
    if (!Number.isFinite(at)) return false;
    const age = t - at;
    const last = seen.get(instanceId);
    if (!last || last.value !== row.value) {
      // A fresh beat by our clock was written when it says; otherwise count from now.
      seen.set(instanceId, { value: row.value, at: age >= 0 && age < timeoutMs ? at : t });
    }
    if (seen.size > 10_000) seen.clear();
    if (age < timeoutMs) return true;
    if (age > CLOCK_SKEW_TOLERANCE_MS) return false;
    // First look at an old-looking beat: give it the benefit of the doubt until we see it stall.
    return t - (seen.get(instanceId)?.at ?? t) < timeoutMs;
  };
}

/** Whether a process of this host still exists (signal 0 only checks). */
function pidRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A new boot on `address` retires the rows of earlier boots there whose process is gone from
 * this host: the restarted server's predecessor, killed a moment ago, is dead at once instead of
 * after the timeout. A process that still runs (a CLI command beside the server, which shares the
 * configured address) is never retired. Returns the retired instance ids.
 */
export async function retirePredecessors(db: Db, instanceId: string, address: string): Promise<string[]> {
  const rows = await db.setting.findMany({
    where: { key: { startsWith: PREFIX } },
    select: { key: true, value: true },
  });
  const host = hostname();
  const retired = rows.filter((r) => {
    if (r.key === key(instanceId)) return false;
    const beat = parseBeat(r.value);
    return beat.address === address && beat.host === host && beat.pid !== null && !pidRunning(beat.pid);
  });
  if (retired.length > 0) await db.setting.deleteMany({ where: { key: { in: retired.map((r) => r.key) } } });
  return retired.map((r) => r.key.slice(PREFIX.length));
}

/** Removes heartbeat rows of instances gone for a day (they accumulate across restarts). */
export async function pruneInstances(db: Db, now = Date.now()): Promise<void> {
  const rows = await db.setting.findMany({
    where: { key: { startsWith: PREFIX } },
    select: { key: true, value: true },
  });
  const stale = rows.filter((r) => now - parseBeat(r.value).at > 24 * 60 * 60_000).map((r) => r.key);
  if (stale.length > 0) await db.setting.deleteMany({ where: { key: { in: stale } } });
}
