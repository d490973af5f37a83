import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sqltag as sql } from "@prisma/client/runtime/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db, rawStatement, sqliteConnection } from "../db";
import { deployMigrations } from "../db/migrate";
import { countTransactions } from "../engine/testing/count-transactions";
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
    const transactions = countTransactions(db);
    try {
      const rows = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          batch.write(() =>
            db.event.create({ data: { type: `t${i}`, payload: "{}" }, select: { type: true } }),
          ),
        ),
      );
      expect(rows.map((r) => r.type)).toEqual(["t0", "t1", "t2", "t3", "t4"]);
      expect(transactions.count).toBe(1);
    } finally {
      transactions.restore();
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

  it("a deferred write waits for the next write's commit, in queue order, or commits alone within deferMs", async () => {
    const batch = createWriteBatcher(db, { deferMs: 100_000 });
    const transactions = countTransactions(db);
    try {
      let deferredDone = false;
      const deferred = batch
        .defer(() => db.event.create({ data: { type: "deferred", payload: "{}" }, select: { seq: true } }))
        .then((row) => {
          deferredDone = true;
          return row;
        });
      await new Promise((r) => setTimeout(r, 50));
      expect(deferredDone).toBe(false);
      expect(await db.event.count({ where: { type: "deferred" } })).toBe(0);
      const durable = await batch.write(() =>
        db.event.create({ data: { type: "durable", payload: "{}" }, select: { seq: true } }),
      );
      const first = await deferred;
      expect(transactions.count).toBe(1);
      // Queue order is commit order: the deferred row was written first.
      expect(first.seq).toBeLessThan(durable.seq);

      const short = createWriteBatcher(db, { deferMs: 30 });
      const alone = await short.defer(() =>
        db.event.create({ data: { type: "alone", payload: "{}" }, select: { type: true } }),
      );
      expect(alone.type).toBe("alone");

      const flushed = batch.defer(() =>
        db.event.create({ data: { type: "flushed", payload: "{}" }, select: { type: true } }),
      );
      await batch.flush();
      expect(await db.event.count({ where: { type: "flushed" } })).toBe(1);
      await flushed;
    } finally {
      transactions.restore();
    }
  });

  it("writes queued while a commit is in flight share the next commit", async () => {
    const batch = createWriteBatcher(db);
    const transactions = countTransactions(db);
    try {
      const write = (type: string) =>
        batch.write(() => db.event.create({ data: { type, payload: "{}" }, select: { type: true } }));
      const first = [write("g1"), write("g1")];
      // Queued on the next two turns of the event loop, while the first commit (several round
      // trips to the SQLite thread) is in flight: both groups go in the one commit after it.
      await new Promise((r) => setImmediate(r));
      const second = [write("g2"), write("g2")];
      await new Promise((r) => setImmediate(r));
      const third = [write("g3"), write("g3")];
      await Promise.all([...first, ...second, ...third]);
      expect(transactions.count).toBe(2);
    } finally {
      transactions.restore();
    }
  });
  it("commits without waiting for the disk only when everything in the commit asked so, and syncs it soon after", async () => {
    const batch = createWriteBatcher(db);
    const connection = sqliteConnection(db);
    if (!connection) throw new Error("the test database is SQLite");
    const event = (type: string) =>
      rawStatement(db, sql`INSERT INTO "Event" ("type", "payload") VALUES (${type}, ${"{}"})`);
    const before = await connection.syncStats();
    // A run's end alone (and what was deferred before it): committed, visible, not synced yet.
    const deferred = batch.defer(() => event("lazy-deferred"));
    await batch.write(() => event("lazy-end"), { disk: false });
    await deferred;
    const lazy = await connection.syncStats();
    expect(lazy.lazyCommits).toBe(before.lazyCommits + 1);
    expect(await db.event.count({ where: { type: { in: ["lazy-deferred", "lazy-end"] } } })).toBe(2);
    // The connection itself stays FULL: Prisma's own commits still sync.
    const [mode] = await db.$queryRawUnsafe<{ synchronous: bigint }[]>("PRAGMA synchronous");
    expect(Number(mode?.synchronous)).toBe(2);
    // The WAL is synced within the lag.
    for (let i = 0; i < 50 && (await connection.syncStats()).pending; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await connection.syncStats()).walSyncs).toBeGreaterThan(lazy.walSyncs);
    // A durable write in the same commit makes it a synced one; so does a plain flush.
    const mixed = [
      batch.write(() => event("lazy-again"), { disk: false }),
      batch.write(() => event("durable")),
    ];
    await Promise.all(mixed);
    void batch.defer(() => event("flushed"));
    await batch.flush();
    expect((await connection.syncStats()).lazyCommits).toBe(lazy.lazyCommits);
  });
});
