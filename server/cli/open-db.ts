/** The database for CLI commands, migrated first so a command works on a fresh clone too. */
import { type Db, dbTarget, getDb } from "../db";
import { migrateIfNeeded } from "../db/prepare";

export async function openMigratedDb(): Promise<Db> {
  await migrateIfNeeded(dbTarget());
  return getDb();
}
