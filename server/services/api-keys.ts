/**
 * API keys for MCP clients. A key is shown once at creation; only its sha256 is stored, so a
 * lookup by hash is the comparison (no timing leak of the key itself). The key decides the user,
 * the mode and the mounted modules of every action it runs.
 */
import { z } from "zod";
import { MODES, type Mode } from "../core/capabilities/types";
import { AppError } from "../core/errors";
import type { Db } from "../db";
import { newToken, sha256 } from "./auth";
import { createTtlCache, type TtlCache } from "./ttl-cache";

export const KEY_PREFIX = "tsk_";
/** The prefix of the ApiKey row an OAuth grant acts as (server/services/oauth); it has no usable key. */
export const OAUTH_KEY_PREFIX = "oauth";
const LAST_USED_EVERY_MS = 60_000;

export const apiKeyInputSchema = z.object({
  name: z.string().trim().min(1, "name is required").max(60, "name has at most 60 characters"),
  mode: z.enum(MODES).default("default"),
  /** Module names without `toolstore/`; ["*"] mounts every module. */
  modules: z
    .array(
      z
        .string()
        .trim()
        .regex(/^(\*|[a-z][a-z0-9_-]*)$/, "module names are lower-case like weather or *"),
    )
    .min(1, "mount at least one module, or * for all")
    .default(["*"]),
});
export type ApiKeyInput = z.input<typeof apiKeyInputSchema>;

export interface ApiKeyIdentity {
  id: string;
  name: string;
  userId: string;
  username: string;
  mode: Mode;
  modules: string[];
}

export async function createApiKey(db: Db, userId: string, input: ApiKeyInput) {
  const parsed = apiKeyInputSchema.safeParse(input);
  if (!parsed.success) {
    throw new AppError(
      "BAD_INPUT",
      parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
    );
  }
  const key = `${KEY_PREFIX}${newToken(24)}`;
  const row = await db.apiKey.create({
    data: {
      name: parsed.data.name,
      userId,
      mode: parsed.data.mode,
      modules: JSON.stringify([...new Set(parsed.data.modules)]),
      prefix: key.slice(0, KEY_PREFIX.length + 6),
      keyHash: sha256(key),
    },
    select: { id: true, name: true, prefix: true, mode: true, createdAt: true },
  });
  return { ...row, key };
}

export async function listApiKeys(db: Db) {
  const rows = await db.apiKey.findMany({
    where: { prefix: { not: OAUTH_KEY_PREFIX } },
    orderBy: [{ revokedAt: "asc" }, { createdAt: "desc" }],
    select: {
      id: true,
      name: true,
      prefix: true,
      mode: true,
      modules: true,
      createdAt: true,
      lastUsedAt: true,
      revokedAt: true,
      user: { select: { username: true } },
    },
  });
  return rows.map((r) => ({ ...r, modules: JSON.parse(r.modules) as string[], owner: r.user.username }));
}

export async function revokeApiKey(db: Db, id: string): Promise<void> {
  const { count } = await db.apiKey.updateMany({
    where: { id, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  forgetApiKeyChecks(db);
  if (count === 0) {
    const exists = await db.apiKey.findUnique({ where: { id }, select: { id: true } });
    throw new AppError(
      exists ? "CONFLICT" : "NOT_FOUND",
      exists ? "This key is already revoked." : "No such API key.",
    );
  }
}

/**
 * Key checks are cached for at most KEY_CACHE_MS (a key check was three queries on
 * every MCP request). Revoking on this instance drops the entry at once; another instance's
 * revocation takes effect within the TTL. Concurrent checks of one key share one lookup.
 */
export const KEY_CACHE_MS = 1_000;
const keyCaches = new WeakMap<Db, TtlCache<ApiKeyIdentity | null>>();

function keyCache(db: Db): TtlCache<ApiKeyIdentity | null> {
  let cache = keyCaches.get(db);
  if (!cache) {
    cache = createTtlCache(KEY_CACHE_MS);
    keyCaches.set(db, cache);
  }
  return cache;
}

/** Forget every cached key check of this database client (after a revocation). */
export function forgetApiKeyChecks(db: Db): void {
  keyCaches.get(db)?.clear();
}

/** The identity behind a presented key, or null when unknown or revoked. Checked on every request. */
export async function verifyApiKey(
  db: Db,
  presented: string | null | undefined,
): Promise<ApiKeyIdentity | null> {
  if (!presented?.startsWith(KEY_PREFIX) || presented.length > 200) return null;
  const hash = sha256(presented);
  return keyCache(db).get(hash, () => lookUpApiKey(db, { keyHash: hash }));
}

/** The identity of a key row by id, read now (no cache): an OAuth grant's access-token check. */
export function apiKeyIdentityById(db: Db, id: string): Promise<ApiKeyIdentity | null> {
  return lookUpApiKey(db, { id });
}

async function lookUpApiKey(
  db: Db,
  where: { keyHash: string } | { id: string },
): Promise<ApiKeyIdentity | null> {
  const row = await db.apiKey.findUnique({
    where,
    select: {
      id: true,
      name: true,
      mode: true,
      modules: true,
      revokedAt: true,
      lastUsedAt: true,
      user: { select: { id: true, username: true, disabledAt: true } },
    },
  });
  if (!row || row.revokedAt || row.user.disabledAt) return null;
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_EVERY_MS) {
    await db.apiKey.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } });
  }
  return {
    id: row.id,
    name: row.name,
    userId: row.user.id,
    username: row.user.username,
    mode: row.mode as Mode,
    modules: JSON.parse(row.modules) as string[],
  };
}
