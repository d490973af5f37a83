import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createApiKey, revokeApiKey, verifyApiKey } from "./api-keys";

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

  it("names the bad field of a bad request", async () => {
    await expect(createApiKey(db, userId, { name: "", modules: [] })).rejects.toThrow(
      /name: name is required/,
    );
    await expect(createApiKey(db, userId, { name: "x", modules: ["Bad Name"] })).rejects.toThrow(
      /module names/,
    );
  });
});
