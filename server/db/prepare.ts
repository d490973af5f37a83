/**
 * Bring a database up to date before it is used: a short-lived client reads which migrations are
 * applied (cheap, and safe while a server has the file open), and only when some are pending is
 * the schema engine started — with no other connection of ours open, since SQLite allows one writer.
 */
import { createDb } from "../db";
import { deployMigrations, unappliedMigrations } from "./migrate";
import type { DbTarget } from "./provider";

export async function migrateIfNeeded(target: DbTarget): Promise<string[]> {
  const probe = createDb(target);
  let pending: string[];
  try {
    pending = await unappliedMigrations(probe, target.provider);
  } finally {
    await probe.$disconnect();
  }
  return pending.length ? deployMigrations(target) : [];
}
