/**
 * The one Prisma client of the process, kept on globalThis so Next's module reloading does not
 * open a second connection. SQLite (default) and PostgreSQL go through Prisma driver adapters.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import type { Sql } from "@prisma/client/runtime/client";
import type { ArgType, SqlQuery } from "@prisma/driver-adapter-utils";
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
const sqliteAdapters = new WeakMap<Db, PrismaWorkerSqlite>();

export function createDb(target: DbTarget): Db {
  let db: Db;
  if (target.provider === "postgresql") {
    db = new PgPrismaClient({ adapter: new PrismaPg(pgConfigFromUrl(target.url)) }) as unknown as Db;
  } else {
    const adapter = new PrismaWorkerSqlite({
      url: target.url,
      timeout: SQLITE_BUSY_TIMEOUT_MS,
      setup: SQLITE_SETUP,
    });
    db = new PrismaClient({ adapter });
    sqliteAdapters.set(db, adapter);
  }
  targets.set(db, target);
  return db;
}

/** The open connection of a SQLite client (on its thread), if it has one. */
export function sqliteConnection(db: Db) {
  return sqliteAdapters.get(db)?.connected;
}

/** A statement for `runBatch` or `db.$transaction([...])` (Prisma runs it when the batch runs). */
export type Statement = ReturnType<Db["$executeRaw"]>;

const rawQueries = new WeakMap<object, Sql>();

/** `db.$executeRaw(query)`, which `runBatch` may also send to the driver itself. */
export function rawStatement(db: Db, query: Sql): Statement {
  const statement = db.$executeRaw(query);
  rawQueries.set(statement, query);
  return statement;
}

/**
 * Runs statements as one batch transaction, as `db.$transaction(statements)` does. On SQLite, a
 * batch of `rawStatement`s goes to the connection's thread in one message instead of one per
 * statement (plus begin and commit): the same adapter calls, and the same values bound.
 */
export async function runBatch(db: Db, statements: PromiseLike<unknown>[]): Promise<unknown[]> {
  const connection = sqliteConnection(db);
  const queries = connection ? statements.map((s) => toSqlQuery(rawQueries.get(s))) : [];
  if (connection && queries.every((q) => q !== undefined)) {
    return connection.executeBatch(queries as SqlQuery[]);
  }
  // biome-ignore lint/suspicious/noExplicitAny: Prisma's batch API takes its own promise type.
  return db.$transaction(statements as any[]);
}

/** A raw query as Prisma hands it to the SQLite adapter (whose mapArg formats dates and booleans). */
function toSqlQuery(query: Sql | undefined): SqlQuery | undefined {
  if (!query) return undefined;
  const argTypes: ArgType[] = [];
  for (const value of query.values) {
    let scalarType: ArgType["scalarType"];
    if (value === null || value === undefined) scalarType = "unknown";
    else if (typeof value === "string") scalarType = "string";
    else if (typeof value === "number") scalarType = Number.isInteger(value) ? "int" : "float";
    else if (typeof value === "boolean") scalarType = "boolean";
    else if (typeof value === "bigint") scalarType = "bigint";
    else if (value instanceof Date) scalarType = "datetime";
    else return undefined;
    argTypes.push({ scalarType, arity: "scalar" });
  }
  return { sql: query.sql, args: query.values.map((v) => v ?? null), argTypes };
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
