import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createApiKey, KEY_CACHE_MS, revokeApiKey, verifyApiKey } from "./api-keys";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-keys-"));
let db: Db;
let userId: string;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "k.db") };
  await deployMigrations(target);
  db = createDb(target);
  userId = (
    await db.user.create({ data: { username: "u", displayName: "U", role: "admin", passwordHash: "x" } })
  ).id;
});
afterAll(async () => {
  await db.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("API keys", () => {
  it("stores only the hash, verifies the key, and refuses it at once after revocation", async () => {
    const created = await createApiKey(db, userId, {
      name: "laptop",
      mode: "plan",
      modules: ["weather", "store"],
    });
    expect(created.key).toMatch(/^tsk_/);
    const row = await db.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(JSON.stringify(row)).not.toContain(created.key);
    const identity = await verifyApiKey(db, created.key);
    expect(identity).toMatchObject({
      id: created.id,
      mode: "plan",
      modules: ["weather", "store"],
      username: "u",
    });
    expect(await verifyApiKey(db, `${created.key}x`)).toBeNull();
    await revokeApiKey(db, created.id);
    expect(await verifyApiKey(db, created.key)).toBeNull();
    await expect(revokeApiKey(db, created.id)).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("caches a key check for at most KEY_CACHE_MS: a revocation by another instance holds after it", async () => {
    const created = await createApiKey(db, userId, { name: "cached", mode: "auto" });
    const target = { provider: "sqlite" as const, url: path.join(dir, "k.db") };
    const other = createDb(target); // another instance on the same database
    try {
      expect(await verifyApiKey(db, created.key)).toMatchObject({ id: created.id });
      const queries: string[] = [];
      // Checks within the TTL share one lookup (a client of its own has a cache of its own).
      const counted = db.$extends({
        query: {
          $allOperations: ({ args, query, operation, model }) => {
            queries.push(`${model}.${operation}`);
            return query(args);
          },
        },
      }) as unknown as Db;
      await Promise.all([verifyApiKey(counted, created.key), verifyApiKey(counted, created.key)]);
      await verifyApiKey(counted, created.key);
      await revokeApiKey(other, created.id);
      const revokedAt = Date.now();
      // Within the TTL this instance may still accept it; after the TTL it never does.
      await new Promise((r) => setTimeout(r, Math.max(0, KEY_CACHE_MS + 50 - (Date.now() - revokedAt))));
      expect(await verifyApiKey(db, created.key)).toBeNull();
      expect(queries.filter((q) => q.startsWith("ApiKey"))).toHaveLength(1);
    } finally {
      await other.$disconnect();
    }
  });

  it("names the bad field of a bad request", async () => {
    await expect(createApiKey(db, userId, { name: "", modules: [] })).rejects.toThrow(
      /name: name is required/,
    );
    await expect(createApiKey(db, userId, { name: "x", modules: ["Bad Name"] })).rejects.toThrow(
      /module names/,
    );
  });
});
