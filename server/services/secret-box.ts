/**
 * Secrets at rest: `seal` encrypts a value with AES-256-GCM under the deployment's key and binds
 * it to a context (e.g. the toolset and variable it belongs to, so a sealed value cannot be moved
 * to another row); `open` reverses it. Sealed text is `tsb1:<keyId>:<iv>:<ciphertext+tag>`
 * (base64url), so a value names the key that sealed it and several keys can be held at once
 * during a rotation. Used for toolset secrets and, through the same API, MCP server secrets.
 *
 * The key comes from TOOLSTORE_SECRET_KEY (32 bytes, base64 or hex) or from a key file created at
 * first start with mode 0600: `secret.key` next to the SQLite file, or `./.data/secret.key` with
 * PostgreSQL. A rotation writes `secret.key.next` first and renames it over `secret.key` last,
 * and keeps `secret.key.previous`, so a crash in between loses nothing.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { AppError } from "../core/errors";

export const SEALED_PREFIX = "tsb1:";
const KEY_BYTES = 32;

export interface SecretKey {
  id: string;
  bytes: Buffer;
}

export interface SecretBox {
  /** The key new values are sealed with. */
  readonly keyId: string;
  seal(plaintext: string, context: string): string;
  /** Throws CONFIG_INVALID when the sealing key is not held, BAD_INPUT when the value was tampered with. */
  open(sealed: string, context: string): string;
}

export function isSealed(value: string): boolean {
  return value.startsWith(SEALED_PREFIX);
}

export function keyIdOf(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex").slice(0, 12);
}

/** 32 bytes written as base64, base64url or hex. */
export function parseSecretKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, "hex");
  const bytes = Buffer.from(t.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  return bytes.length === KEY_BYTES ? bytes : null;
}

export function newSecretKeyText(): string {
  return randomBytes(KEY_BYTES).toString("base64");
}

/** A box that seals with the first key and opens with any of them. */
export function createSecretBox(keys: readonly Buffer[]): SecretBox {
  const ring = new Map<string, Buffer>();
  for (const bytes of keys) {
    if (bytes.length !== KEY_BYTES) throw new AppError("CONFIG_INVALID", "a secret key must be 32 bytes");
    ring.set(keyIdOf(bytes), bytes);
  }
  const [current] = keys;
  if (!current) throw new AppError("CONFIG_INVALID", "no secret key");
  const currentId = keyIdOf(current);
  return {
    keyId: currentId,
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", current, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${SEALED_PREFIX}${currentId}:${iv.toString("base64url")}:${body.toString("base64url")}`;
    },
    open(sealed, context) {
      const [, keyId = "", ivText = "", bodyText = ""] = sealed.split(":");
      if (!isSealed(sealed) || !ivText || !bodyText) throw new AppError("BAD_INPUT", "not a sealed value");
      const key = ring.get(keyId);
      if (!key) {
        throw new AppError(
          "CONFIG_INVALID",
          `a stored secret was sealed with key ${keyId}, which this server does not have; set TOOLSTORE_SECRET_KEY to that key or restore its key file (see README "Secrets at rest")`,
        );
      }
      const body = Buffer.from(bodyText, "base64url");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(ivText, "base64url"));
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(body.subarray(body.length - 16));
      try {
        return Buffer.concat([
          decipher.update(body.subarray(0, body.length - 16)),
          decipher.final(),
        ]).toString("utf8");
      } catch {
        throw new AppError(
          "BAD_INPUT",
          "a stored secret does not decrypt: it was altered or belongs to another row",
        );
      }
    },
  };
}

export interface KeySourceOptions {
  /** TOOLSTORE_SECRET_KEY, if set. */
  envKey?: string;
  /** Where the key file lives (see `keyFilePath`). */
  keyFile: string;
  /** Create the key file when no key exists yet (first start). */
  create: boolean;
}

export interface LoadedKeys {
  /** Current key first, then any others held (a rotation in progress, the previous key). */
  keys: Buffer[];
  source: "env" | "file" | "created";
}

export function keyFilePath(
  db: { provider: "sqlite" | "postgresql"; url: string },
  cwd = process.cwd(),
): string {
  return db.provider === "sqlite"
    ? path.join(path.dirname(db.url), "secret.key")
    : path.join(cwd, ".data", "secret.key");
}

function readKeyFile(file: string): Buffer | null {
  if (!fs.existsSync(file)) return null;
  const bytes = parseSecretKey(fs.readFileSync(file, "utf8"));
  if (!bytes) {
    throw new AppError(
      "CONFIG_INVALID",
      `${file} does not hold a 32-byte key (base64 or hex); restore it from a backup`,
    );
  }
  return bytes;
}

/** Reads the key(s); creates the key file only when asked and when none exists. */
export function loadSecretKeys(options: KeySourceOptions): LoadedKeys | null {
  const others = [`${options.keyFile}.next`, `${options.keyFile}.previous`]
    .map(readKeyFile)
    .filter((k): k is Buffer => k !== null);
  if (options.envKey) {
    const bytes = parseSecretKey(options.envKey);
    if (!bytes)
      throw new AppError(
        "CONFIG_INVALID",
        "TOOLSTORE_SECRET_KEY must be 32 bytes in base64 or hex; create one with: openssl rand -base64 32",
      );
    const file = readKeyFile(options.keyFile);
    return { keys: [bytes, ...(file ? [file] : []), ...others], source: "env" };
  }
  const file = readKeyFile(options.keyFile);
  if (file) return { keys: [file, ...others], source: "file" };
  if (!options.create) return null;
  fs.mkdirSync(path.dirname(options.keyFile), { recursive: true });
  const text = newSecretKeyText();
  // wx: never overwrite a key another process just created.
  try {
    fs.writeFileSync(options.keyFile, `${text}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return { keys: [readKeyFile(options.keyFile) as Buffer, ...others], source: "file" };
  }
  return { keys: [Buffer.from(text, "base64"), ...others], source: "created" };
}

/** Write a key file atomically with mode 0600. */
export function writeKeyFile(file: string, keyText: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${keyText}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}
