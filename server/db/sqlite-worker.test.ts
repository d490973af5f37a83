import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sqltag as sql } from "@prisma/client/runtime/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db, rawStatement, runBatch } from "../db";
import { deployMigrations } from "./migrate";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-sqlite-worker-"));
const file = path.join(dir, "w.db");
let db: Db;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: file };
  await deployMigrations(target);
  db = createDb(target);
  await db.setting.count(); // the connection is open, as in a started server
});
afterAll(async () => {
  await db.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Another process takes the write lock and holds it until told to stop (stdin closes). */
async function holdWriteLock(): Promise<{ release(): Promise<void> }> {
  const script = `const D=require(${JSON.stringify(path.resolve("node_modules/better-sqlite3"))});const d=new D(${JSON.stringify(file)});d.exec("BEGIN IMMEDIATE");d.prepare("INSERT INTO Setting(key,value,updatedAt) VALUES('lock','x',0)").run();process.stdout.write("locked\\n");process.stdin.on("end",()=>{d.exec("ROLLBACK");process.exit(0)});process.stdin.resume();`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise((r) => child.stdout.once("data", r));
  return {
    async release() {
      const exited = new Promise((r) => child.once("exit", r));
      child.stdin.end();
      await exited;
    },
  };
}

describe("SQLite on a worker thread", () => {
  it("a write waiting for another process's lock does not stop the event loop", async () => {
    const lock = await holdWriteLock();
    let ticks = 0;
    const ticker = setInterval(() => {
      ticks += 1;
    }, 10);
    const write = db.setting.create({ data: { key: "waited", value: "1" } });
    let writeDone = false;
    void write.then(() => {
      writeDone = true;
    });
    // The loop keeps running while the write waits: timers fire, then the lock goes.
    await new Promise((r) => setTimeout(r, 300));
    const ticksWhileLocked = ticks;
    expect(writeDone).toBe(false);
    await lock.release();
    await write;
    clearInterval(ticker);
    // With the driver on this thread the loop was blocked for the whole wait: no tick at all.
    expect(ticksWhileLocked).toBeGreaterThan(3);
    expect(await db.setting.findUnique({ where: { key: "waited" } })).toMatchObject({ value: "1" });
  });

  it("keeps Prisma's errors, transactions and Bytes as they are in process", async () => {
    await db.setting.create({ data: { key: "dup", value: "1" } });
    await expect(db.setting.create({ data: { key: "dup", value: "2" } })).rejects.toMatchObject({
      code: "P2002",
    });
    await expect(
      db.$transaction(async (tx) => {
        await tx.setting.create({ data: { key: "rolled-back", value: "1" } });
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(await db.setting.findUnique({ where: { key: "rolled-back" } })).toBeNull();
    const [a, b] = await db.$transaction([
      db.setting.create({ data: { key: "batch-a", value: "a" } }),
      db.setting.create({ data: { key: "batch-b", value: "b" } }),
    ]);
    expect([a.key, b.key]).toEqual(["batch-a", "batch-b"]);
    const user = await db.user.create({
      data: { username: "bytes", displayName: "B", role: "admin", passwordHash: "x" },
    });
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const asset = await db.imageAsset.create({
      data: { userId: user.id, mime: "image/png", width: 1, height: 1, bytes, sha256: "s" },
    });
    const read = await db.imageAsset.findUniqueOrThrow({ where: { id: asset.id } });
    expect(Buffer.isBuffer(read.bytes) || read.bytes instanceof Uint8Array).toBe(true);
    expect(Buffer.from(read.bytes).equals(bytes)).toBe(true);
  });

  it("a batch of raw statements in one round trip binds what Prisma's batch binds, and is one transaction", async () => {
    const at = new Date("2026-12-01T10:11:12.345Z");
    const row = (id: string) =>
      rawStatement(
        db,
        sql`INSERT INTO "GateDecisionRecord" ("id", "runId", "sessionId", "capability", "category", "decision",
          "reason", "ruleId", "approvalId", "argsHash", "ms", "createdAt")
          VALUES (${id}, ${null}, ${"s"}, ${"c.x"}, ${"read"}, ${"allow"}, ${""}, ${null}, ${undefined}, ${"h"}, ${7}, ${at})`,
      );
    // The one-message path, and Prisma's own batch of the same statements.
    expect(await runBatch(db, [row("via-batch")])).toEqual([1]);
    expect(await db.$transaction([row("via-prisma")])).toEqual([1]);
    const stored = await db.$queryRaw<Record<string, unknown>[]>(
      sql`SELECT "id", typeof("ms") AS ms, typeof("createdAt") AS t, "createdAt", typeof("approvalId") AS a
          FROM "GateDecisionRecord" WHERE "id" IN ('via-batch', 'via-prisma') ORDER BY "id" DESC`,
    );
    const [batched, prisma] = stored.map(({ id: _, ...rest }) => rest);
    expect(batched).toEqual(prisma);
    // Committed: another connection to the file sees the rows, and the next batch can begin.
    const other = createDb({ provider: "sqlite", url: file });
    try {
      const read = await other.gateDecisionRecord.findUniqueOrThrow({ where: { id: "via-batch" } });
      expect(read).toMatchObject({ ms: 7, createdAt: at, approvalId: null, ruleId: null });
    } finally {
      await other.$disconnect();
    }
    expect(await runBatch(db, [row("second-batch")])).toEqual([1]);
    // A failing statement rolls the whole batch back.
    await expect(runBatch(db, [row("rolled-back-row"), row("via-batch")])).rejects.toThrow();
    expect(await db.gateDecisionRecord.findUnique({ where: { id: "rolled-back-row" } })).toBeNull();
    // So does one in a batch that was not to wait for the disk, and the connection syncs again after.
    await expect(
      runBatch(db, [row("lazy-rolled-back"), row("via-batch")], { disk: false }),
    ).rejects.toThrow();
    expect(await db.gateDecisionRecord.findUnique({ where: { id: "lazy-rolled-back" } })).toBeNull();
    const [mode] = await db.$queryRawUnsafe<{ synchronous: bigint }[]>("PRAGMA synchronous");
    expect(Number(mode?.synchronous)).toBe(2);
    expect(await runBatch(db, [row("lazy-after")], { disk: false })).toEqual([1]);
  });

  it("reuses a prepared statement for each text, with each execution's own arguments", async () => {
    // better-sqlite3 binds a statement once; a reused one that kept its first arguments would write
    // "k-0" three times (or throw on the second bind), and a read would return the first row again.
    const put = (i: number) =>
      db.$executeRaw(
        sql`INSERT INTO "Setting" ("key", "value", "updatedAt") VALUES (${`k-${i}`}, ${`v-${i}`}, ${i})`,
      );
    for (let i = 0; i < 3; i++) expect(await put(i)).toBe(1);
    const get = (i: number) =>
      db.$queryRaw<{ value: string; updatedAt: unknown }[]>(
        sql`SELECT "value", "updatedAt" FROM "Setting" WHERE "key" = ${`k-${i}`}`,
      );
    for (let i = 2; i >= 0; i--) expect((await get(i))[0]?.value).toBe(`v-${i}`);
    // The same text after a failed execution (a duplicate key) still runs.
    await expect(put(1)).rejects.toThrow();
    expect(await put(3)).toBe(1);
    // Model queries and their transactions (BEGIN, COMMIT: statements without arguments) as well.
    for (let i = 0; i < 3; i++) {
      await db.$transaction(async (tx) => {
        await tx.setting.update({ where: { key: `k-${i}` }, data: { value: `w-${i}` } });
      });
    }
    const rows = await db.setting.findMany({
      where: { key: { in: ["k-0", "k-1", "k-2", "k-3"] } },
      orderBy: { key: "asc" },
    });
    expect(rows.map((r) => r.value)).toEqual(["w-0", "w-1", "w-2", "v-3"]);
  });
});
