/**
 * Migrations through Prisma's own schema engine compiled to WebAssembly, driven over the same
 * driver adapters the app uses. Works offline (the native engine cannot be downloaded here) and
 * online alike. Migrations stay in Prisma's standard `migrations/<timestamp>_<name>/migration.sql`.
 * SQLite migrations live in prisma/migrations, PostgreSQL ones in prisma/postgresql/migrations;
 * both are created from the one schema in prisma/schema.prisma.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import type { SchemaEngine } from "@prisma/schema-engine-wasm";
import pg from "pg";
import { AppError } from "../core/errors";
import { type DbProvider, type DbTarget, pgConfigFromUrl } from "./provider";

// In the Next.js bundle (/readyz lists unapplied migrations) import.meta.dirname is not defined;
// the server runs from the project root there (scripts/start.ts).
export const PRISMA_DIR = import.meta.dirname
  ? path.resolve(import.meta.dirname, "../../prisma")
  : path.resolve(process.cwd(), "prisma");

export function schemaPathFor(provider: DbProvider): string {
  return provider === "sqlite"
    ? path.join(PRISMA_DIR, "schema.prisma")
    : path.join(PRISMA_DIR, "postgresql", "schema.prisma");
}

export function migrationsDirFor(provider: DbProvider): string {
  return path.join(path.dirname(schemaPathFor(provider)), "migrations");
}

/** The PostgreSQL schema is the SQLite one with the provider and output swapped; it is derived, never edited. */
export function writeDerivedSchemas(): void {
  const main = fs.readFileSync(schemaPathFor("sqlite"), "utf8");
  if (!/provider = "sqlite"/.test(main))
    throw new AppError("INTERNAL", "prisma/schema.prisma must use sqlite");
  const pg = main
    .replace(/provider = "sqlite"/, 'provider = "postgresql"')
    .replace(
      /output(\s*)= "\.\.\/server\/db\/generated\/sqlite"/,
      'output$1= "../../server/db/generated/postgresql"',
    );
  const header = "// GENERATED from ../schema.prisma by `npm run db:generate`. Edit that file instead.\n";
  const target = schemaPathFor("postgresql");
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const next = header + pg;
  if (!fs.existsSync(target) || fs.readFileSync(target, "utf8") !== next) fs.writeFileSync(target, next);
}

function adapterFactory(target: DbTarget) {
  if (target.provider === "sqlite") {
    fs.mkdirSync(path.dirname(target.url), { recursive: true });
    return new ScriptFriendlySqliteShadow({ url: target.url });
  }
  return new ShadowSafePrismaPg(pgConfigFromUrl(target.url));
}

/**
 * The engine replays each migration into SQLite's in-memory shadow database with executeRaw, but
 * better-sqlite3 prepares one statement at a time. Argument-free SQL there is a script: run it whole.
 */
class ScriptFriendlySqliteShadow extends PrismaBetterSqlite3 {
  override async connectToShadowDb() {
    const adapter = await super.connectToShadowDb();
    const executeRaw = adapter.executeRaw.bind(adapter);
    adapter.executeRaw = async (query) => {
      if (query.args.length > 0) return executeRaw(query);
      await adapter.executeScript(query.sql);
      return 0;
    };
    return adapter;
  }
}

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;
let charPatched = false;

/**
 * The engine's catalog queries return PostgreSQL's internal `"char"` type, which the pg adapter
 * refuses to map. It is a one-byte text value; present it as text. Patched once, on the shared
 * queryable prototype that transactions inherit too.
 */
function readCharColumnsAsText(adapter: object) {
  if (charPatched) return;
  let proto = Object.getPrototypeOf(adapter);
  while (proto && !Object.hasOwn(proto, "performIO")) proto = Object.getPrototypeOf(proto);
  if (!proto) return;
  const performIO = proto.performIO as (...args: unknown[]) => Promise<{ fields: { dataTypeID: number }[] }>;
  proto.performIO = async function (this: unknown, ...args: unknown[]) {
    const result = await performIO.apply(this, args);
    for (const field of result.fields ?? [])
      if (field.dataTypeID === PG_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
    return result;
  };
  charPatched = true;
}

/**
 * The pg adapter drops its shadow database while its own pool still holds a connection, which
 * PostgreSQL refuses. This one closes the pool first and drops with FORCE.
 */
class ShadowSafePrismaPg extends PrismaPg {
  readonly #fields: ReturnType<typeof pgConfigFromUrl>;

  constructor(fields: ReturnType<typeof pgConfigFromUrl>) {
    super(fields);
    this.#fields = fields;
  }

  override async connect() {
    const adapter = await super.connect();
    readCharColumnsAsText(adapter);
    return adapter;
  }

  override async connectToShadowDb() {
    const admin = new pg.Client(this.#fields);
    await admin.connect();
    const database = `toolstore_shadow_${randomUUID().replace(/-/g, "")}`;
    await admin.query(`CREATE DATABASE "${database}"`);
    const adapter = await new PrismaPg({ ...this.#fields, database }).connect();
    readCharColumnsAsText(adapter);
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await dispose();
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.end();
    };
    return adapter;
  }
}

function readMigrations(provider: DbProvider) {
  const baseDir = migrationsDirFor(provider);
  const lockPath = path.join(baseDir, "migration_lock.toml");
  const dirs = fs.existsSync(baseDir)
    ? fs
        .readdirSync(baseDir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  return {
    baseDir,
    lockfile: {
      path: "migration_lock.toml",
      content: fs.existsSync(lockPath) ? fs.readFileSync(lockPath, "utf8") : null,
    },
    shadowDbInitScript: "",
    migrationDirectories: dirs.map((name) => {
      const file = path.join(baseDir, name, "migration.sql");
      const content = fs.existsSync(file)
        ? ({ tag: "ok", value: fs.readFileSync(file, "utf8") } as const)
        : ({ tag: "error", value: `missing ${file}` } as const);
      return { path: name, migrationFile: { path: "migration.sql", content } };
    }),
  };
}

const FILTERS = { externalTables: [], externalEnums: [] };

type EngineModule = typeof import("@prisma/schema-engine-wasm");
let engineModule: Promise<EngineModule> | undefined;

/**
 * The package's entry imports its .wasm as an ES module, which Node 20 only does behind a flag;
 * load the wasm-bindgen glue and instantiate the WebAssembly ourselves instead.
 */
function loadEngineModule(): Promise<EngineModule> {
  engineModule ??= (async () => {
    const glue = (await import("@prisma/schema-engine-wasm/schema_engine_bg")) as unknown as EngineModule & {
      __wbg_set_wasm(exports: WebAssembly.Exports): void;
    };
    const glueJs = createRequire(import.meta.url).resolve("@prisma/schema-engine-wasm/schema_engine_bg");
    const wasmPath = path.join(path.dirname(glueJs), "schema_engine_bg.wasm");
    const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmPath), {
      "./schema_engine_bg.js": glue as unknown as WebAssembly.ModuleImports,
    });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return glue;
  })();
  return engineModule;
}

async function withEngine<T>(target: DbTarget, fn: (engine: SchemaEngine) => Promise<T>): Promise<T> {
  const schemaPath = schemaPathFor(target.provider);
  const content = fs.readFileSync(schemaPath, "utf8");
  // engine.free() does not close the connections it opened; track and dispose them ourselves, or
  // a second engine in the same process finds the SQLite file locked.
  const raw = adapterFactory(target);
  const opened: { dispose(): Promise<void> }[] = [];
  const connect = raw.connect.bind(raw);
  raw.connect = async () => {
    const adapter = await connect();
    opened.push(adapter);
    return adapter;
  };
  const factory = bindMigrationAwareSqlAdapterFactory(raw);
  const logs: string[] = [];
  const { SchemaEngine } = await loadEngineModule();
  const engine = await SchemaEngine.new(
    { datamodels: [[schemaPath, content]] },
    (line: string) => logs.push(line),
    factory,
  );
  try {
    return await fn(engine);
  } catch (error) {
    let message = describeEngineError(error);
    // Adapter errors reach the engine as registry ids; put the real driver error back in the message.
    const id = /External error id#(\d+)/.exec(message)?.[1];
    const external = id ? factory.errorRegistry.consumeError(Number(id)) : undefined;
    if (external) message = message.replace(/External error id#\d+/, describeEngineError(external.error));
    throw new AppError("CONFIG_INVALID", `migration engine failed: ${message}`, {
      cause: error,
    });
  } finally {
    engine.free();
    await Promise.allSettled(opened.map((adapter) => adapter.dispose()));
  }
}

function describeEngineError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error && typeof error === "object") {
    const e = error as { message?: unknown; meta?: unknown };
    if (typeof e.message === "string") return e.message;
    return JSON.stringify(error);
  }
  return String(error);
}

/**
 * Migration folders the database has not applied, read through an open client — cheap, and it
 * does not take the schema engine's connection while a server is using the file.
 */
export async function unappliedMigrations(
  db: { $queryRawUnsafe<T>(sql: string): Promise<T> },
  provider: DbProvider,
): Promise<string[]> {
  const folders = readMigrations(provider).migrationDirectories.map((d) => d.path);
  let applied: { migration_name: string }[];
  try {
    applied = await db.$queryRawUnsafe<{ migration_name: string }[]>(
      `SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
  } catch {
    return folders;
  }
  const done = new Set(applied.map((r) => r.migration_name));
  return folders.filter((f) => !done.has(f));
}

/** Apply every migration not yet applied. Returns the names applied now. */
export async function deployMigrations(target: DbTarget): Promise<string[]> {
  return withEngine(target, async (engine) => {
    const out = await engine.applyMigrations({
      migrationsList: readMigrations(target.provider),
      filters: FILTERS,
    });
    return out.appliedMigrationNames;
  });
}

export interface MigrationStatus {
  applied: boolean;
  pending: string[];
  problems: string[];
}

export async function migrationStatus(target: DbTarget): Promise<MigrationStatus> {
  return withEngine(target, async (engine) => {
    const out = await engine.diagnoseMigrationHistory({
      migrationsList: readMigrations(target.provider),
      optInToShadowDatabase: false,
      filters: FILTERS,
    });
    const pending: string[] = [];
    const problems: string[] = [];
    const history = out.history;
    if (history?.diagnostic === "databaseIsBehind") pending.push(...history.unappliedMigrationNames);
    else if (history) problems.push(JSON.stringify(history));
    if (out.failedMigrationNames.length) problems.push(`failed: ${out.failedMigrationNames.join(", ")}`);
    if (out.editedMigrationNames.length) problems.push(`edited: ${out.editedMigrationNames.join(", ")}`);
    return { applied: pending.length === 0 && problems.length === 0, pending, problems };
  });
}

/**
 * SQL that takes the migrations folder to the schema; empty when they agree. The migrations are
 * replayed into a shadow database reached through the adapter (in memory for SQLite).
 */
export async function diffMigrationsToSchema(target: DbTarget): Promise<string> {
  ensureLockfile(target.provider);
  return withEngine(target, async (engine) => {
    const schemaPath = schemaPathFor(target.provider);
    const out = await engine.diff({
      from: { tag: "migrations", ...readMigrations(target.provider) },
      to: {
        tag: "schemaDatamodel",
        files: [{ path: schemaPath, content: fs.readFileSync(schemaPath, "utf8") }],
      },
      script: true,
      exitCode: null,
      filters: FILTERS,
    });
    const sql = out.stdout ?? "";
    return /^\s*(--[^\n]*\n?\s*)*$/.test(sql) || /This is an empty migration/.test(sql) ? "" : sql;
  });
}

/**
 * Create a migration folder from the difference between the existing migrations and the schema,
 * without touching any real data. Returns the new folder name, or null when nothing changed.
 */
export async function createMigration(
  target: DbTarget,
  name: string,
  now = new Date(),
): Promise<string | null> {
  const sql = await diffMigrationsToSchema(target);
  if (!sql) return null;
  const baseDir = migrationsDirFor(target.provider);
  const stamp = now.toISOString().replace(/[-:T]/g, "").slice(0, 14);
  const folder = `${stamp}_${name}`;
  fs.mkdirSync(path.join(baseDir, folder), { recursive: true });
  fs.writeFileSync(path.join(baseDir, folder, "migration.sql"), sql);
  return folder;
}

function ensureLockfile(provider: DbProvider) {
  const lock = path.join(migrationsDirFor(provider), "migration_lock.toml");
  if (fs.existsSync(lock)) return;
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  fs.writeFileSync(
    lock,
    `# Please do not edit this file manually\n# It should be added in your version-control system (e.g., Git)\nprovider = "${provider}"\n`,
  );
}
