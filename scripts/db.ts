/**
 * The project's database commands; they work where Prisma's native schema engine cannot be
 * downloaded (they drive the WASM engine) and where it can.
 *   generate            write the derived PostgreSQL schema and generate both Prisma clients
 *   deploy              apply pending migrations to DATABASE_URL
 *   status              show pending migrations of DATABASE_URL
 *   dev --name <name>   create a migration for SQLite, and for PostgreSQL when POSTGRES_DEV_URL is set
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { isAppError } from "../server/core/errors";
import {
  createMigration,
  deployMigrations,
  migrationStatus,
  schemaPathFor,
  writeDerivedSchemas,
} from "../server/db/migrate";
import { parseDatabaseUrl, redactUrl } from "../server/db/provider";
import { loadEnv } from "../server/env";

function generate() {
  writeDerivedSchemas();
  const prismaBin = path.resolve("node_modules/.bin/prisma");
  for (const provider of ["sqlite", "postgresql"] as const) {
    execFileSync(prismaBin, ["generate", "--schema", schemaPathFor(provider)], {
      stdio: ["ignore", "ignore", "inherit"],
      // `generate` never runs the schema engine, but the CLI insists on finding one.
      env: {
        ...process.env,
        PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? "/bin/true",
      },
    });
  }
  console.log("prisma clients generated (sqlite, postgresql)");
}

async function dev(name: string) {
  writeDerivedSchemas();
  // One timestamp for both providers so the two histories carry the same migration names.
  const now = new Date();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-migrate-"));
  try {
    const sqlite = await createMigration(
      { provider: "sqlite", url: path.join(scratch, "dev.db") },
      name,
      now,
    );
    console.log(sqlite ? `sqlite: created ${sqlite}` : "sqlite: schema unchanged, no migration");
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const pgUrl = process.env.POSTGRES_DEV_URL;
  if (!pgUrl) {
    console.log(
      "postgresql: skipped; set POSTGRES_DEV_URL=postgresql://user@127.0.0.1:5432/db to create it too",
    );
    return;
  }
  const pg = await createMigration(parseDatabaseUrl(pgUrl), name, now);
  console.log(pg ? `postgresql: created ${pg}` : "postgresql: schema unchanged, no migration");
}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case "generate":
      return generate();
    case "deploy": {
      const target = parseDatabaseUrl(loadEnv().DATABASE_URL);
      const applied = await deployMigrations(target);
      console.log(applied.length ? `applied: ${applied.join(", ")}` : "database is up to date");
      return;
    }
    case "status": {
      const env = loadEnv();
      const status = await migrationStatus(parseDatabaseUrl(env.DATABASE_URL));
      console.log(`database: ${redactUrl(env.DATABASE_URL)}`);
      console.log(status.pending.length ? `pending: ${status.pending.join(", ")}` : "no pending migrations");
      for (const p of status.problems) console.log(`problem: ${p}`);
      return;
    }
    case "dev": {
      const i = rest.indexOf("--name");
      const name = i >= 0 ? rest[i + 1] : undefined;
      if (!name || !/^[a-z0-9_]+$/.test(name)) {
        throw new Error("usage: npm run db:migrate -- --name <snake_case_name>");
      }
      return dev(name);
    }
    default:
      throw new Error("usage: tsx scripts/db.ts generate|deploy|status|dev --name <name>");
  }
}

main().catch((error: unknown) => {
  console.error(
    isAppError(error)
      ? `error: ${error.message}`
      : error instanceof Error
        ? `error: ${error.message}`
        : error,
  );
  process.exit(1);
});
