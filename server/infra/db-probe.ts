/**
 * Readiness of the database, cheap enough for a load balancer's probe every few seconds: it
 * answers a query, its migrations are all applied, and (SQLite) its file can take a write — the
 * write lock is asked for on a separate short-lived connection that never waits (a few tries over
 * about a second, so an ordinary commit in progress is not mistaken for a locked file), and given
 * back at once without writing anything. The server's own connection is never made to wait.
 */
import Database from "better-sqlite3";
import type { Db } from "../db";
import { unappliedMigrations } from "../db/migrate";
import type { DbTarget } from "../db/provider";

export interface ProbeResult {
  ok: boolean;
  /** What failed, with the fix when there is one. */
  message?: string;
}

const WRITE_TRIES = 8;
const WRITE_RETRY_MS = 120;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Whether another connection holds the SQLite file's write lock now (never waits for it). */
async function sqliteWritable(file: string): Promise<ProbeResult> {
  let last = "";
  for (let attempt = 0; attempt < WRITE_TRIES; attempt++) {
    let probe: Database.Database | undefined;
    try {
      probe = new Database(file, { fileMustExist: true, timeout: 0 });
      probe.exec("BEGIN IMMEDIATE");
      probe.exec("ROLLBACK");
      return { ok: true };
    } catch (error) {
      last = (error as { code?: string }).code ?? (error as Error).message;
      if (last !== "SQLITE_BUSY" && last !== "SQLITE_LOCKED") break;
    } finally {
      probe?.close();
    }
    await new Promise((r) => setTimeout(r, WRITE_RETRY_MS));
  }
  return {
    ok: false,
    message:
      last === "SQLITE_BUSY" || last === "SQLITE_LOCKED"
        ? "the SQLite file is locked by another connection (it cannot take writes); find the process holding it"
        : `the SQLite file cannot be opened for writing: ${last}`,
  };
}

export function createDbProbe(db: Db, target: DbTarget, timeoutMs = 2_000) {
  let migrated = false;
  return {
    async database(): Promise<ProbeResult> {
      try {
        await withTimeout(db.$queryRawUnsafe("SELECT 1"), timeoutMs, "the database");
        if (target.provider === "sqlite") return await sqliteWritable(target.url);
        return { ok: true };
      } catch (error) {
        return { ok: false, message: (error as Error).message.split("\n")[0] };
      }
    },
    async migrations(): Promise<ProbeResult> {
      // Applied migrations stay applied: once they all are, the folder is not read again.
      if (migrated) return { ok: true };
      try {
        const pending = await withTimeout(
          unappliedMigrations(db, target.provider),
          timeoutMs,
          "the database",
        );
        if (pending.length === 0) {
          migrated = true;
          return { ok: true };
        }
        return {
          ok: false,
          message: `${pending.length} migration(s) not applied (${pending.slice(0, 3).join(", ")}); run npm run db:deploy or restart with npm start`,
        };
      } catch (error) {
        return { ok: false, message: (error as Error).message.split("\n")[0] };
      }
    },
  };
}
