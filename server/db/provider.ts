/**
 * Which database a URL names. The embedded default is SQLite in a local file; PostgreSQL
 * serves deployments with several instances. Anything else is refused with one clear line.
 */
import path from "node:path";
import { AppError } from "../core/errors";

export type DbProvider = "sqlite" | "postgresql";

export interface DbTarget {
  provider: DbProvider;
  /** For sqlite: an absolute file path; for postgresql: the connection string. */
  url: string;
}

export function parseDatabaseUrl(raw: string, cwd = process.cwd()): DbTarget {
  const value = raw.trim();
  if (value.startsWith("file:")) {
    const file = value.slice("file:".length).replace(/^\/\/(?=\/)/, "");
    if (!file) {
      throw new AppError(
        "CONFIG_INVALID",
        `DATABASE_URL "${raw}" names no file; write file:./.data/toolstore.db`,
      );
    }
    return { provider: "sqlite", url: path.resolve(cwd, file) };
  }
  if (/^postgres(ql)?:\/\//.test(value)) {
    try {
      new URL(value);
    } catch {
      throw new AppError(
        "CONFIG_INVALID",
        `DATABASE_URL is not a valid PostgreSQL URL; write postgresql://user:password@host:5432/database`,
      );
    }
    return { provider: "postgresql", url: value };
  }
  throw new AppError(
    "CONFIG_INVALID",
    `DATABASE_URL "${redactUrl(raw)}" is not understood; use file:./.data/toolstore.db (SQLite) or postgresql://user@host:5432/db`,
  );
}

/** Hide a password in a URL before it is printed. */
export function redactUrl(raw: string): string {
  return raw.replace(/(\/\/[^:/@]+:)[^@]*@/, "$1***@");
}

/** Split a PostgreSQL URL into fields; the pg adapter's shadow database needs fields, not a string. */
export function pgConfigFromUrl(url: string) {
  const u = new URL(url);
  return {
    host: decodeURIComponent(u.hostname),
    port: u.port ? Number(u.port) : 5432,
    user: decodeURIComponent(u.username) || undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    database: decodeURIComponent(u.pathname.replace(/^\//, "")) || undefined,
  };
}
