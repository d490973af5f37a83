import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createEventBus, type EventBus, latestEventSeq, pruneEvents } from "./events";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-events-"));
let db: Db;
let bus: EventBus;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "e.db") };
  await deployMigrations(target);
  db = createDb(target);
  bus = createEventBus(db, { pollMs: 20 });
});
afterAll(async () => {
  bus.close();
  await db.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("event outbox tail", () => {
  it("holds at a gap until the earlier row commits, keeps order, and gives up on a gap that never fills", async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const done = (async () => {
      for await (const e of bus.subscribe({ signal: controller.signal })) seen.push(e.type);
    })();
    await sleep(100);
    const first = await bus.publish("a", null);
    // A later row becomes visible before an earlier one (as with two PostgreSQL transactions).
    await db.event.create({ data: { seq: first.seq + 2, type: "c", payload: "null" } });
    await sleep(300);
    expect(seen).toEqual(["a"]);
    await db.event.create({ data: { seq: first.seq + 1, type: "b", payload: "null" } });
    await sleep(200);
    expect(seen).toEqual(["a", "b", "c"]);
    // A sequence number that never commits (a rolled-back insert) delays the tail by about a second.
    await db.event.create({ data: { seq: first.seq + 4, type: "e", payload: "null" } });
    await sleep(300);
    expect(seen).toEqual(["a", "b", "c"]);
    await sleep(1_200);
    expect(seen).toEqual(["a", "b", "c", "e"]);
    controller.abort();
    await done;
  });

  it("a subscriber that starts after the latest seq was read gets what was published in between", async () => {
    const since = await latestEventSeq(db);
    // Published while a page renders, before its browser subscribes: without `since` it is missed.
    const between = await bus.publish("between", { n: 1 });
    expect(between.seq).toBe(since + 1);
    const controller = new AbortController();
    const seen: string[] = [];
    const done = (async () => {
      for await (const e of bus.subscribe({ signal: controller.signal, afterSeq: since })) {
        seen.push(e.type);
        if (seen.length === 2) controller.abort();
      }
    })();
    await bus.publish("after", null);
    await done;
    expect(seen).toEqual(["between", "after"]);
    expect(await latestEventSeq(db)).toBe(since + 2);
  });

  it("prunes the events from before the cutoff and keeps the rest", async () => {
    const hour = 60 * 60 * 1000;
    const now = Date.now();
    const at = (hoursAgo: number) => new Date(now - hoursAgo * hour);
    const made = [];
    for (const [type, hoursAgo] of [
      ["old1", 30],
      ["old2", 26],
      ["new1", 2],
      ["new2", 1],
    ] as const) {
      made.push(await db.event.create({ data: { type, payload: "null", createdAt: at(hoursAgo) } }));
    }
    const firstMade = made[0]?.seq ?? 0;
    const left = async () =>
      (await db.event.findMany({ where: { seq: { gte: firstMade } }, orderBy: { seq: "asc" } })).map(
        (e) => e.type,
      );
    // Everything before the first of these rows is older than a day too (written before this test).
    await db.event.updateMany({ where: { seq: { lt: firstMade } }, data: { createdAt: at(48) } });
    expect(await pruneEvents(db, at(24))).toBeGreaterThanOrEqual(2);
    expect(await left()).toEqual(["new1", "new2"]);
    expect(await db.event.count({ where: { seq: { lt: firstMade } } })).toBe(0);
    // Nothing recent: all of it goes.
    expect(await pruneEvents(db, new Date(now + hour))).toBe(2);
    expect(await left()).toEqual([]);
  });
});
