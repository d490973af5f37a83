import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDb } from "../db";
import { deployMigrations, diffMigrationsToSchema, migrationStatus, migrationsDirFor } from "./migrate";
import { parseDatabaseUrl } from "./provider";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-db-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("SQLite migrations (WASM schema engine)", () => {
  const target = parseDatabaseUrl(`file:${path.join(dir, "nested", "t.db")}`);

  it("creates the file, applies every migration once, and reports nothing pending", async () => {
    const applied = await deployMigrations(target);
    const folders = fs.readdirSync(migrationsDirFor("sqlite")).filter((n) => n !== "migration_lock.toml");
    expect(applied).toEqual(folders.sort());
    expect(await deployMigrations(target)).toEqual([]);
    expect(await migrationStatus(target)).toEqual({ applied: true, pending: [], problems: [] });
  });

  it("has migrations that match the schema (no drift)", async () => {
    expect(await diffMigrationsToSchema(target)).toBe("");
  });

  it("runs in WAL mode with durable writes, and keeps data across clients", async () => {
    const db = createDb(target);
    await db.user.create({
      data: { username: "kept", displayName: "Kept", role: "admin", passwordHash: "x" },
    });
    const [journal] = await db.$queryRawUnsafe<{ journal_mode: string }[]>("PRAGMA journal_mode");
    const [sync] = await db.$queryRawUnsafe<{ synchronous: bigint }[]>("PRAGMA synchronous");
    expect(journal?.journal_mode).toBe("wal");
    expect(Number(sync?.synchronous)).toBe(2);
    const [fk] = await db.$queryRawUnsafe<{ foreign_keys: bigint }[]>("PRAGMA foreign_keys");
    expect(Number(fk?.foreign_keys)).toBe(1);
    await db.$disconnect();
    const again = createDb(target);
    expect(await again.user.count({ where: { username: "kept" } })).toBe(1);
    await again.$disconnect();
  });

  it("keeps the PostgreSQL history in step with the SQLite one", () => {
    const names = (p: "sqlite" | "postgresql") =>
      fs
        .readdirSync(migrationsDirFor(p))
        .filter((n) => n !== "migration_lock.toml")
        .sort();
    expect(names("postgresql")).toEqual(names("sqlite"));
  });
});

describe("DATABASE_URL parsing", () => {
  it("names the problem and the fix", () => {
    expect(() => parseDatabaseUrl("mysql://root@localhost/db")).toThrow(/not understood; use file:/);
    expect(() => parseDatabaseUrl("file:")).toThrow(/names no file/);
    expect(() => parseDatabaseUrl("postgresql://[bad")).toThrow(/not a valid PostgreSQL URL/);
  });

  it("resolves relative SQLite paths against the working directory", () => {
    expect(parseDatabaseUrl("file:./.data/x.db", "/srv/app")).toEqual({
      provider: "sqlite",
      url: "/srv/app/.data/x.db",
    });
  });
});
