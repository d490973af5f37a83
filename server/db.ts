/**
 * The one Prisma client of the process, kept on globalThis so Next's module reloading does not
 * open a second connection. SQLite (default) and PostgreSQL go through Prisma driver adapters.
 */
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as PgPrismaClient } from "./db/generated/postgresql/client";
import { PrismaClient } from "./db/generated/sqlite/client";
import { type DbTarget, parseDatabaseUrl, pgConfigFromUrl } from "./db/provider";
import { loadEnv } from "./env";

/** Both generated clients expose the same model API; the SQLite one names the type. */
export type Db = PrismaClient;
/** Row types of a query: `Prisma.ApprovalGetPayload<{ select: typeof select }>`. */
export type { Prisma } from "./db/generated/sqlite/client";

const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/**
 * Sets the connection's pragmas before Prisma sends its first query (the adapter keeps one
 * connection per client): WAL lets readers and the writer overlap; FULL makes a committed
 * decision survive a power cut; foreign keys make the schema's cascades real.
 */
class TunedSqlite extends PrismaBetterSqlite3 {
  override async connect() {
    const adapter = await super.connect();
    await adapter.executeScript(
      "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;",
    );
    return adapter;
  }
}

const targets = new WeakMap<Db, DbTarget>();

export function createDb(target: DbTarget): Db {
  const db =
    target.provider === "postgresql"
      ? (new PgPrismaClient({ adapter: new PrismaPg(pgConfigFromUrl(target.url)) }) as unknown as Db)
      : new PrismaClient({ adapter: new TunedSqlite({ url: target.url, timeout: SQLITE_BUSY_TIMEOUT_MS }) });
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
