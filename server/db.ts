/**
 * The one Prisma client of the process, kept on globalThis so Next's module reloading does not
 * open a second connection. SQLite (default) and PostgreSQL go through Prisma driver adapters.
 */

import { PrismaPg } from "@prisma/adapter-pg";
import type { Sql } from "@prisma/client/runtime/client";
import type { ArgType, SqlQuery } from "@prisma/driver-adapter-utils";
import pg from "pg";
import { PrismaClient as PgPrismaClient } from "./db/generated/postgresql/client";
import { PrismaClient } from "./db/generated/sqlite/client";
import { type DbTarget, parseDatabaseUrl, pgConfigFromUrl } from "./db/provider";
import { PrismaWorkerSqlite } from "./db/sqlite-worker";
import { loadEnv } from "./env";
import { processSingleton } from "./infra/process-singletons";

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
const pgPools = new WeakMap<Db, pg.Pool>();

export function createDb(target: DbTarget): Db {
  let db: Db;
  if (target.provider === "postgresql") {
    // The client's own pool, kept here too for `runBatch`; $disconnect ends it.
    const pool = new pg.Pool(pgConfigFromUrl(target.url));
    // The same pg module at run time; the adapter's types come from its own copy of @types/pg.
    const adapter = new PrismaPg(pool as unknown as ConstructorParameters<typeof PrismaPg>[0], {
      disposeExternalPool: true,
    });
    db = new PgPrismaClient({ adapter }) as unknown as Db;
    pgPools.set(db, pool);
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

/** The pool of a PostgreSQL client (which `runBatch` sends its one-query batches to). */
export function pgPool(db: Db): pg.Pool | undefined {
  return pgPools.get(db);
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
 * Runs statements as one batch transaction, as `db.$transaction(statements)` does, and resolves
 * to each one's count of changed rows. A batch of `rawStatement`s takes one round trip instead of
 * one per statement plus begin and commit:
 * - SQLite: one message to the connection's thread, with the same adapter calls and bindings;
 * - PostgreSQL: one simple query whose statements PostgreSQL runs as one implicit transaction
 *   (all or nothing), with the values written as literals by pg's `escapeLiteral` and dates as
 *   Prisma's pg adapter formats them.
 * A failed batch rejects with the driver's error (the write batcher then retries each statement
 * through Prisma, which names the error).
 *
 * `disk: false` (raw statements only): the commit does not wait for the disk. It is visible at
 * once and survives a crash of the process; a power cut or an OS crash may lose it until the
 * database syncs it, within a bounded lag (SQLite: synchronous = NORMAL for this commit and a WAL
 * sync within DEFAULT_SYNC_LAG_MS; PostgreSQL: synchronous_commit = off, flushed by its WAL writer
 * within three wal_writer_delay). A later commit that waits for the disk covers it too.
 */
export async function runBatch(
  db: Db,
  statements: PromiseLike<unknown>[],
  options: { disk?: boolean } = {},
): Promise<unknown[]> {
  const disk = options.disk !== false;
  const connection = sqliteConnection(db);
  if (connection) {
    const queries = statements.map((s) => toSqlQuery(rawQueries.get(s)));
    if (queries.every((q) => q !== undefined))
      return connection.executeBatch(queries as SqlQuery[], { disk });
  }
  const pool = pgPool(db);
  if (pool && !pool.ended && (statements.length > 1 || !disk)) {
    const texts = statements.map((s) => inlinedPgSql(rawQueries.get(s)));
    if (texts.every((t) => t !== undefined)) {
      // One simple query is one implicit transaction; SET LOCAL holds for it alone.
      const lead = disk ? [] : ["SET LOCAL synchronous_commit TO OFF"];
      const results = (await pool.query([...lead, ...texts].join(";\n"))) as unknown as
        | pg.QueryResult
        | pg.QueryResult[];
      return (Array.isArray(results) ? results : [results]).slice(lead.length).map((r) => r.rowCount ?? 0);
    }
  }
  // biome-ignore lint/suspicious/noExplicitAny: Prisma's batch API takes its own promise type.
  return db.$transaction(statements as any[]);
}

/** The statement with its values as PostgreSQL literals, or undefined for a value it cannot write. */
function inlinedPgSql(query: Sql | undefined): string | undefined {
  if (!query) return undefined;
  let text = query.strings[0] ?? "";
  for (const [i, value] of query.values.entries()) {
    const literal = pgLiteral(value);
    if (literal === undefined) return undefined;
    text += literal + (query.strings[i + 1] ?? "");
  }
  return text.startsWith("-") ? `(${text})` : text;
}

function pgLiteral(value: unknown): string | undefined {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "string") return value.includes("\0") ? undefined : pg.escapeLiteral(value);
  // A negative number goes in parentheses: after a "-" in the statement, "--5" would open a comment.
  if (typeof value === "number") return Number.isFinite(value) ? signed(String(value)) : undefined;
  if (typeof value === "bigint") return signed(String(value));
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (value instanceof Date && !Number.isNaN(value.getTime())) return pg.escapeLiteral(pgDateTime(value));
  return undefined;
}

function signed(text: string): string {
  return text.startsWith("-") ? `(${text})` : text;
}

/** As @prisma/adapter-pg writes a DateTime parameter (UTC, milliseconds when there are any). */
function pgDateTime(date: Date): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const ms = date.getUTCMilliseconds();
  return `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}${ms ? `.${pad(ms, 3)}` : ""}`;
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

export function dbTarget(): DbTarget {
  return processSingleton("dbTarget", () => parseDatabaseUrl(loadEnv().DATABASE_URL));
}

export function getDb(): Db {
  return processSingleton("db", () => createDb(dbTarget()));
}
