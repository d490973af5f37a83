/**
 * The database for CLI commands, migrated first so a command works on a fresh clone too. Its audit
 * appends write the signed checkpoint at once: the process ends before any timer would.
 */
import { type Db, dbTarget, getDb } from "../db";
import { migrateIfNeeded } from "../db/prepare";
import { auditLogFor } from "../infra/audit-log";
import { auditCheckpointsFor } from "../services/audit-anchor";

export async function openMigratedDb(): Promise<Db> {
  await migrateIfNeeded(dbTarget());
  const db = getDb();
  const checkpoints = auditCheckpointsFor(db, { everyEntries: 1 });
  if (checkpoints) auditLogFor(db, { checkpoints });
  return db;
}
