/**
 * hasUsers: false on an empty database, true once setup made the first admin, and from then on
 * answered without a query (accounts are never deleted), per database client.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { completeSetup, hasUsers, issueSetupToken } from "./auth";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-auth-"));
let db: Db;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "auth.db") };
  await deployMigrations(target);
  db = createDb(target);
});

afterAll(async () => {
  await db.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

it("says no until the first admin exists, then yes without asking the database again", async () => {
  expect(await hasUsers(db)).toBe(false);
  // A "no" is never kept: the next question asks again.
  expect(await hasUsers(db)).toBe(false);

  const token = (await issueSetupToken(db)) as string;
  await completeSetup(db, { token, username: "admin", displayName: "Admin", password: "a long password 1" });
  expect(await hasUsers(db)).toBe(true);

  let counted = 0;
  const counting = new Proxy(db.user, {
    get(target, key, receiver) {
      if (key === "count") counted += 1;
      return Reflect.get(target, key, receiver);
    },
  });
  const spied = new Proxy(db, {
    get: (target, key, receiver) => (key === "user" ? counting : Reflect.get(target, key, receiver)),
  });
  // The same client answers from what it learnt; another client (here a proxy of it) asks once.
  expect(await hasUsers(db)).toBe(true);
  expect(await hasUsers(spied)).toBe(true);
  expect(await hasUsers(spied)).toBe(true);
  expect(counted).toBe(1);
});
