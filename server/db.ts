/**
 * The one Prisma client of the process, kept on globalThis so Next's module reloading does not
 * open a second connection. SQLite (default) and PostgreSQL go through Prisma driver adapters.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as PgPrismaClient } from "./db/generated/postgresql/client";
import { PrismaClient } from "./db/generated/sqlite/client";
import { type DbTarget, parseDatabaseUrl, pgConfigFromUrl } from "./db/provider";
import { PrismaWorkerSqlite } from "./db/sqlite-worker";
import { loadEnv } from "./env";

/** Both generated clients expose the same model API; the SQLite one names the type. */
export type Db = PrismaClient;
/** Row types of a query: `Prisma.ApprovalGetPayload<{ select: typeof select }>`. */
export type { Prisma } from "./db/generated/sqlite/client";

const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/**
 * The connection's pragmas, set before Prisma sends its first query (one connection per client,
 * on its own thread: ./db/sqlite-worker.ts): WAL lets readers and the writer overlap; FULL makes a
 * committed decision survive a power cut; foreign keys make the schema's cascades real.
 */
const SQLITE_SETUP = "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;";

const targets = new WeakMap<Db, DbTarget>();

export function createDb(target: DbTarget): Db {
  const db =
    target.provider === "postgresql"
      ? (new PgPrismaClient({ adapter: new PrismaPg(pgConfigFromUrl(target.url)) }) as unknown as Db)
      : new PrismaClient({
          adapter: new PrismaWorkerSqlite({
            url: target.url,
            timeout: SQLITE_BUSY_TIMEOUT_MS,
            setup: SQLITE_SETUP,
          }),
        });
  targets.set(db, target);
  return db;
}

/** Which database a client was created for (e.g. to keep the secret key file beside it). */
export function targetOfDb(db: Db): DbTarget | undefined {
  return targets.get(db);
}

const holder = globalThis as typeof globalThis & { __toolstoreDb?: Db; __toolstoreDbTarget?: DbTarget };

export function dbTarget(): DbTarget {
  holder.__toolstoreDbTarget ??= parseDatabaseUrl(loadEnv().DATABASE_URL);
  return holder.__toolstoreDbTarget;
}

export function getDb(): Db {
  holder.__toolstoreDb ??= createDb(dbTarget());
  return holder.__toolstoreDb;
}
