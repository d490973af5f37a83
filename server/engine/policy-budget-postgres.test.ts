/**
 * A per-key hourly budget (#27) holds across runs and across instances: two engines on one
 * PostgreSQL database, nothing shared but the database, run the same key's actions at once.
 * Runs when TOOLSTORE_TEST_POSTGRES_URL names a server; otherwise says in one line why not.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../core/capabilities/types";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { parseDatabaseUrl, pgConfigFromUrl } from "../db/provider";
import { createApiKey } from "../services/api-keys";
import { createPolicyRule } from "../services/policy-rules";
import { type LocalServer, sendJson, startLocalServer } from "../toolset-examples/local-server";
import { type ServerEngine, startServerEngine } from "./index";
import { ledgerModule } from "./testing/policy-ledger";

const baseUrl = process.env.TOOLSTORE_TEST_POSTGRES_URL;
if (!baseUrl) {
  console.log(
    "postgres budget tests skipped: set TOOLSTORE_TEST_POSTGRES_URL=postgresql://root@127.0.0.1:5432/test to run them",
  );
}

describe.runIf(!!baseUrl)("[POLICY] budgets on PostgreSQL", () => {
  const name = `toolstore_budget_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
  let admin: pg.Client;
  let dbs: Db[] = [];
  let engines: ServerEngine[] = [];
  let receiver: LocalServer;
  let session: Session;

  beforeAll(async () => {
    admin = new pg.Client(pgConfigFromUrl(baseUrl as string));
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const u = new URL(baseUrl as string);
    u.pathname = `/${name}`;
    const target = parseDatabaseUrl(u.toString());
    await deployMigrations(target);
    receiver = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true }));
    dbs = [createDb(target), createDb(target)];
    const [db] = dbs as [Db];
    const user = await db.user.create({
      data: { username: "owner", displayName: "O", role: "admin", passwordHash: "x" },
    });
    const key = await createApiKey(db, user.id, { name: "budgeted", mode: "auto", modules: ["*"] });
    session = {
      id: `mcp-${randomUUID()}`,
      userId: user.id,
      surface: "mcp",
      mode: "auto",
      mountedModules: ["*"],
      apiKeyId: key.id,
      actorLabel: 'key "budgeted"',
    };
    await createPolicyRule(db, user.id, {
      effect: "deny",
      pattern: "ledger.write_entry",
      budget: { limit: 3, per: "hour" },
      description: "three writes an hour",
    });
    engines = await Promise.all(
      dbs.map((d, i) =>
        startServerEngine({
          db: d,
          instanceId: `budget-${i}`,
          workers: 1,
          extraModules: [() => [ledgerModule(receiver.baseUrl)]],
        }),
      ),
    );
  }, 120_000);

  afterAll(async () => {
    for (const e of engines) await e.shutdown();
    for (const d of dbs) await d.$disconnect();
    await receiver?.close();
    await admin?.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin?.end();
  });

  const code = `import { write_entry } from "toolstore/ledger";
export default async function () {
  const out = [];
  for (const name of ["a", "b"]) {
    try { await write_entry({ name }); out.push("ran"); } catch (e) { out.push(e.error + ":" + e.budget.per); }
  }
  return out;
}`;

  it("two instances running the key's actions at once take exactly three writes, then every run is refused", async () => {
    const results = await Promise.all(engines.map((engine) => engine.run({ session, code })));
    const outcomes = results.flatMap((r) => r.envelope.result as string[]);
    expect(outcomes.filter((o) => o === "ran")).toHaveLength(3);
    expect(outcomes.filter((o) => o === "budget_exceeded:hour")).toHaveLength(1);
    expect(receiver.requests).toHaveLength(3);

    // A later run, on either instance, is over the same hour's budget.
    const later = await (engines[1] as ServerEngine).run({ session, code });
    expect(later.envelope.result).toEqual(["budget_exceeded:hour", "budget_exceeded:hour"]);
    expect(receiver.requests).toHaveLength(3);
    const [use] = await (dbs[0] as Db).policyBudgetUse.findMany();
    expect(use).toMatchObject({ scope: `key:${session.apiKeyId}`, count: 3 });
  }, 60_000);
});
