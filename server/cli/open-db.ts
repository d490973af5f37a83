/** The database for CLI commands, migrated first so a command works on a fresh clone too. */
import { type Db, dbTarget, getDb } from "../db";
import { deployMigrations, unappliedMigrations } from "../db/migrate";

export async function openMigratedDb(): Promise<Db> {
  const db = getDb();
  const target = dbTarget();
  // A running server keeps the file open; only reach for the schema engine when there is work.
  if ((await unappliedMigrations(db, target.provider)).length > 0) await deployMigrations(target);
  return db;
}
