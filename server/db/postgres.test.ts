/**
 * The PostgreSQL path: the same migration history applies and the app's queries run. Runs when
 * TOOLSTORE_TEST_POSTGRES_URL names a server (CI sets it); otherwise says in one line why not.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { sqltag as sql } from "@prisma/client/runtime/client";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db, pgPool, rawStatement, runBatch } from "../db";
import { startServerEngine } from "../engine";
import { createEventBus } from "../infra/events";
import { syncToolsetsFolder } from "../modules/toolsets";
import { completeSetup, createSession, issueSetupToken, sessionUser } from "../services/auth";
import { deployMigrations, diffMigrationsToSchema, migrationStatus } from "./migrate";
import { parseDatabaseUrl, pgConfigFromUrl } from "./provider";

const baseUrl = process.env.TOOLSTORE_TEST_POSTGRES_URL;
if (!baseUrl) {
  console.log(
    "postgres tests skipped: set TOOLSTORE_TEST_POSTGRES_URL=postgresql://root@127.0.0.1:5432/test to run them",
  );
}

describe.runIf(!!baseUrl)("PostgreSQL", () => {
  const name = `toolstore_test_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
  let admin: pg.Client;
  let db: Db;
  let url: string;

  beforeAll(async () => {
    admin = new pg.Client(pgConfigFromUrl(baseUrl as string));
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const u = new URL(baseUrl as string);
    u.pathname = `/${name}`;
    url = u.toString();
  });

  afterAll(async () => {
    await db?.$disconnect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  it("applies the same migrations, and again applies nothing", async () => {
    const target = parseDatabaseUrl(url);
    const applied = await deployMigrations(target);
    expect(applied.length).toBeGreaterThan(0);
    expect(await deployMigrations(target)).toEqual([]);
    expect((await migrationStatus(target)).pending).toEqual([]);
    expect(await diffMigrationsToSchema(target)).toBe("");
  });

  it("runs the app's queries: setup, sessions and live events", async () => {
    db = createDb(parseDatabaseUrl(url));
    const token = await issueSetupToken(db);
    expect(token).toBeTruthy();
    const { userId } = await completeSetup(db, {
      token: token as string,
      username: "pgadmin",
      displayName: "PG Admin",
      password: "a-long-password",
    });
    const session = await createSession(db, userId);
    expect((await sessionUser(db, session.token))?.role).toBe("admin");

    const bus = createEventBus(db, { pollMs: 20 });
    const controller = new AbortController();
    const received: string[] = [];
    const done = (async () => {
      for await (const e of bus.subscribe({ signal: controller.signal })) {
        received.push(e.type);
        if (received.length === 2) controller.abort();
      }
    })();
    await new Promise((r) => setTimeout(r, 50));
    await bus.publish("a", { n: 1 });
    await bus.publish("b", { n: 2 });
    await done;
    bus.close();
    expect(received).toEqual(["a", "b"]);
  });

  it("runs actions through the engine: toolsets, the gate, approvals and the audit trail", async () => {
    const sync = await syncToolsetsFolder(db, path.resolve("toolsets"));
    expect(sync.failed).toEqual([]);
    const engine = await startServerEngine({ db, approvalTtlMs: 30_000 });
    try {
      const user = await db.user.findFirstOrThrow({ select: { id: true } });
      const session = {
        id: "pg-session",
        userId: user.id,
        surface: "cli" as const,
        mode: "default" as const,
        mountedModules: ["*"],
        actorLabel: "pg test",
      };
      const read = await engine.run({
        session,
        code: `import { evaluate } from "toolstore/calculator";
               export default async function () { return await evaluate({ expression: "3*3" }); }`,
      });
      expect(read.envelope.ok).toBe(true);
      expect(JSON.stringify(read.envelope.result)).toContain("9");

      const asked = engine.run({
        session,
        code: `import { save } from "toolstore/assets";
               export default async function () { try { await save({ data_base64: "iVBORw0KGgo=" }); } catch (e) { return e.error; } }`,
      });
      let approvalId: string | undefined;
      for (let i = 0; i < 100 && !approvalId; i++) {
        await new Promise((r) => setTimeout(r, 100));
        approvalId = (await db.approval.findFirst({ where: { status: "pending" }, select: { id: true } }))
          ?.id;
      }
      await engine.approvals.decide({
        approvalId: approvalId as string,
        answer: "deny",
        decidedBy: { userId: user.id, label: "pg" },
      });
      expect((await asked).envelope.result).toBe("permission_denied");
      const decisions = await db.gateDecisionRecord.findMany({
        select: { capability: true, decision: true },
      });
      expect(decisions).toEqual(
        expect.arrayContaining([
          { capability: "calculator.evaluate", decision: "allow" },
          { capability: "assets.save", decision: "deny" },
        ]),
      );
    } finally {
      await engine.shutdown();
    }
  });

  it("a batch of raw statements is one query that writes what Prisma's batch writes, all or nothing", async () => {
    const pool = pgPool(db) as pg.Pool;
    const sent: string[] = [];
    const query = pool.query.bind(pool);
    // biome-ignore lint/suspicious/noExplicitAny: spying on pg's overloaded query method.
    (pool as any).query = (text: string, ...rest: unknown[]) => {
      sent.push(text);
      // biome-ignore lint/suspicious/noExplicitAny: passing the call on unchanged.
      return (query as any)(text, ...rest);
    };
    const tricky = `it's a \\ back\\slash, "quotes", $1, ?, -- not a comment, é ✓`;
    const row = (id: string, at: Date, reason: string | null = tricky) =>
      rawStatement(
        db,
        sql`INSERT INTO "GateDecisionRecord" ("id", "runId", "sessionId", "capability", "category", "decision",
          "reason", "ruleId", "approvalId", "argsHash", "ms", "createdAt")
          VALUES (${id}, ${null}, ${"s"}, ${"c.x"}, ${"read"}, ${"allow"}, ${reason}, ${null}, ${undefined}, ${"h"}, ${7}, ${at})`,
      );
    const withMs = new Date("2026-12-01T10:11:12.345Z");
    const whole = new Date("2026-12-01T10:11:12.000Z");
    try {
      expect(await runBatch(db, [row("pg-batch-1", withMs), row("pg-batch-2", whole)])).toEqual([1, 1]);
      expect(sent).toHaveLength(1);
      await db.$transaction([row("pg-prisma-1", withMs), row("pg-prisma-2", whole)]);
      const read = await db.gateDecisionRecord.findMany({
        where: { id: { startsWith: "pg-" } },
        orderBy: { id: "asc" },
      });
      const [b1, b2, p1, p2] = read.map(({ id: _, ...rest }) => rest);
      expect([b1, b2]).toEqual([p1, p2]);
      expect(b1).toMatchObject({ reason: tricky, ms: 7, createdAt: withMs, approvalId: null });
      expect(b2?.createdAt).toEqual(whole);
      // A failing statement (a duplicate id) leaves nothing of its batch.
      await expect(runBatch(db, [row("pg-rolled-back", whole), row("pg-batch-1", whole)])).rejects.toThrow();
      expect(await db.gateDecisionRecord.findUnique({ where: { id: "pg-rolled-back" } })).toBeNull();
      // The pool's connections are usable after it.
      expect(await runBatch(db, [row("pg-after-1", whole), row("pg-after-2", whole)])).toEqual([1, 1]);
      // A negative value right after a "-" stays a number, not the start of a "--" comment.
      const minus = (id: string) =>
        rawStatement(db, sql`UPDATE "GateDecisionRecord" SET "ms" = 10 -${-3} WHERE "id" = ${id}`);
      expect(await runBatch(db, [minus("pg-after-1"), minus("pg-after-2")])).toEqual([1, 1]);
      const after = await db.gateDecisionRecord.findMany({ where: { id: { startsWith: "pg-after-" } } });
      expect(after.map((r) => r.ms)).toEqual([13, 13]);
      // A commit that need not wait for the disk: one query, with synchronous_commit off for it alone.
      sent.length = 0;
      expect(await runBatch(db, [row("pg-lazy-1", whole)], { disk: false })).toEqual([1]);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatch(/^SET LOCAL synchronous_commit TO OFF;/);
      expect(await db.gateDecisionRecord.count({ where: { id: "pg-lazy-1" } })).toBe(1);
      const settings = await Promise.all(
        Array.from({ length: 3 }, () => pool.query("SHOW synchronous_commit")),
      );
      expect(settings.map((r) => r.rows[0]?.synchronous_commit)).toEqual(["on", "on", "on"]);
    } finally {
      // biome-ignore lint/suspicious/noExplicitAny: restoring the method patched above.
      (pool as any).query = query;
    }
  });
});
