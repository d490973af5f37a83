/** The database for CLI commands, migrated first so a command works on a fresh clone too. */
import { type Db, dbTarget, getDb } from "../db";
import { deployMigrations } from "../db/migrate";

export async function openMigratedDb(): Promise<Db> {
  await deployMigrations(dbTarget());
  return getDb();
}
