/**
 * The PostgreSQL path: the same migration history applies and the app's queries run. Runs when
 * TOOLSTORE_TEST_POSTGRES_URL names a server (CI sets it); otherwise says in one line why not.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { completeSetup, createSession, issueSetupToken, sessionUser } from "../services/auth";
import { startServerEngine } from "../services/engine";
import { createEventBus } from "../services/events";
import { syncToolsetsFolder } from "../services/toolsets";
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
});
