import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../../db";
import { deployMigrations } from "../../db/migrate";
import { createWriteBatcher } from "./write-batcher";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-batch-"));
let db: Db;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "b.db") };
  await deployMigrations(target);
  db = createDb(target);
});
afterAll(async () => {
  await db.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("write batcher", () => {
  it("commits writes of one tick together and hands each caller its own result", async () => {
    const batch = createWriteBatcher(db);
    let transactions = 0;
    const original = db.$transaction.bind(db);
    // biome-ignore lint/suspicious/noExplicitAny: counting calls of Prisma's overloaded method.
    (db as any).$transaction = (ops: any) => {
      transactions += 1;
      return original(ops);
    };
    try {
      const rows = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          batch.write(() =>
            db.event.create({ data: { type: `t${i}`, payload: "{}" }, select: { type: true } }),
          ),
        ),
      );
      expect(rows.map((r) => r.type)).toEqual(["t0", "t1", "t2", "t3", "t4"]);
      expect(transactions).toBe(1);
    } finally {
      // biome-ignore lint/suspicious/noExplicitAny: restoring the method patched above.
      (db as any).$transaction = original;
    }
  });

  it("a failing write fails only its own caller", async () => {
    const batch = createWriteBatcher(db);
    const good = batch.write(() =>
      db.event.create({ data: { type: "good", payload: "{}" }, select: { seq: true } }),
    );
    const bad = batch.write(() =>
      db.gateDecisionRecord.create({
        data: {
          runId: "no-such-run",
          sessionId: "s",
          capability: "c",
          category: "read",
          decision: "allow",
          argsHash: "h",
        },
      }),
    );
    await expect(bad).rejects.toThrow();
    expect(await good).toMatchObject({ seq: expect.any(Number) });
    expect(await db.event.count({ where: { type: "good" } })).toBe(1);
  });
});
