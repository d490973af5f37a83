/**
 * Policy you can try before you trust it (#27), end to end with the SDK's own Client: real HTTP on
 * loopback, a real SQLite database, the real engine and gate, and a `ledger` module whose impls
 * call a local HTTP receiver, so "the impl ran" is counted where its effect lands.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ObservationEnvelope } from "../core/actions/envelope";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "../engine";
import { answerApprovals, ledgerModule } from "../engine/testing/policy-ledger";
import { createApiKey } from "../services/api-keys";
import { createPolicyRule, deletePolicyRule, listPolicyRules } from "../services/policy-rules";
import { whatIfRules } from "../services/rules-what-if";
import { type LocalServer, sendJson, startLocalServer } from "../toolset-examples/local-server";
import { createMcpHttpHandler } from "./http";
import { createMcpBackend } from "./mcp-backend";
import { serveFetchHandler } from "./node-adapter";

const root = path.resolve(import.meta.dirname, "../..");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-trials-"));
const dbFile = path.join(dir, "trials.db");
let db: Db;
let engine: ServerEngine;
let server: { url: string; close(): Promise<void> };
let receiver: LocalServer;
let userId: string;

const hits = (kind: string) => receiver.requests.filter((r) => r.url.pathname === `/${kind}`).length;

async function key(mode: "plan" | "default" | "auto") {
  return (await createApiKey(db, userId, { name: `trials-${mode}`, mode, modules: ["*"] })).key;
}

async function connect(apiKey: string) {
  const client = new Client({ name: "vitest", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
    }),
  );
  return client;
}

async function execute(client: Client, args: { code: string; plan?: string }): Promise<ObservationEnvelope> {
  const result = (await client.callTool({ name: "execute_code", arguments: args }, undefined, {
    timeout: 60_000,
  })) as { structuredContent?: ObservationEnvelope };
  if (!result.structuredContent) throw new Error(`no envelope: ${JSON.stringify(result)}`);
  return result.structuredContent;
}

/** Waits out the rule source's cache, so a rule just saved applies to the next call. */
const ruleCache = () => new Promise((r) => setTimeout(r, 300));

const PLAN_CODE = `import { list, write_entry } from "toolstore/ledger";
import { planning } from "toolstore/run";
export default async function () {
  const before = await list({});
  const a = await write_entry({ name: "a", amount: 1 });
  const b = await write_entry({ name: "b", amount: 2 });
  return { before, a, b, planning: await planning({}) };
}`;

beforeAll(async () => {
  receiver = await startLocalServer((req, res) => sendJson(res, 200, { ok: true, path: req.url.pathname }));
  const target = { provider: "sqlite" as const, url: dbFile };
  await deployMigrations(target);
  db = createDb(target);
  userId = (
    await db.user.create({ data: { username: "owner", displayName: "O", role: "admin", passwordHash: "x" } })
  ).id;
  engine = await startServerEngine({
    db,
    ports: createPrismaPorts(db),
    approvalTtlMs: 60_000,
    extraModules: [() => [ledgerModule(receiver.baseUrl)]],
  });
  const backend = createMcpBackend({ db, engine: async () => engine, publicUrl: "http://console.test" });
  server = await serveFetchHandler(
    createMcpHttpHandler({
      db,
      backend,
      consoleUrl: "http://console.test",
      allowedOrigins: [],
      rateLimitPerMinute: 1000,
    }),
  );
}, 120_000);

afterAll(async () => {
  await server?.close();
  await engine?.shutdown();
  await receiver?.close();
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("[POLICY] plan mode as a dry run, and approving the plan", () => {
  let planKey: string;
  let planId: string;

  it("a plan-mode action runs its read, plans both writes, and no write impl runs", async () => {
    planKey = await key("plan");
    const client = await connect(planKey);
    const envelope = await execute(client, { code: PLAN_CODE });
    await client.close();
    expect(envelope.ok).toBe(true);
    expect(envelope.result).toEqual({
      before: { ok: true, path: "/list" },
      a: { planned: true, capability: "ledger.write_entry", id: "p1" },
      b: { planned: true, capability: "ledger.write_entry", id: "p2" },
      planning: true,
    });
    expect(envelope.plan?.calls).toEqual([
      expect.objectContaining({
        id: "p1",
        capability: "ledger.write_entry",
        category: "write",
        args: { amount: 1, name: "a" },
      }),
      expect.objectContaining({
        id: "p2",
        capability: "ledger.write_entry",
        category: "write",
        args: { amount: 2, name: "b" },
      }),
    ]);
    expect(hits("list")).toBe(1);
    expect(hits("write")).toBe(0);
    planId = envelope.plan?.id ?? "";
    expect(planId).toBeTruthy();
  });

  it("approving the plan runs exactly those writes; a call not in the plan or with other arguments asks", async () => {
    const client = await connect(planKey);
    const approver = answerApprovals(engine, db, userId, (a) =>
      a.capability === "toolstore.plan" ? "once" : "deny",
    );
    const code = `import { write_entry } from "toolstore/ledger";
export default async function () {
  const out = [];
  for (const args of [{ name: "a", amount: 1 }, { name: "b", amount: 2 }, { name: "c", amount: 3 }, { name: "b", amount: 9 }]) {
    try { await write_entry(args); out.push("ran"); } catch (e) { out.push(e.error); }
  }
  return out;
}`;
    const envelope = await execute(client, { code, plan: planId });
    await approver.stop();
    await client.close();
    expect(envelope.result).toEqual(["ran", "ran", "permission_denied", "permission_denied"]);
    expect(approver.asked.map((a) => [a.capability, a.args])).toEqual([
      ["toolstore.plan", expect.objectContaining({ plan: planId })],
      ["ledger.write_entry", { amount: 3, name: "c" }],
      ["ledger.write_entry", { amount: 9, name: "b" }],
    ]);
    expect(hits("write")).toBe(2);
    expect(envelope.approvedPlan).toEqual({
      id: planId,
      approvalId: expect.any(String),
      covered: ["p1", "p2"],
    });
    // The audit records which calls the plan covered, with the plan's approval.
    const covered = await db.gateDecisionRecord.findMany({
      where: { approvalId: envelope.approvedPlan?.approvalId },
      select: { reason: true },
    });
    expect(covered.map((c) => c.reason)).toEqual([
      `covered by the approved plan ${planId} (call p1)`,
      `covered by the approved plan ${planId} (call p2)`,
    ]);

    // A plan runs once.
    const again = await connect(planKey);
    const second = await execute(again, { code, plan: planId });
    await again.close();
    expect(second.error).toMatchObject({
      kind: "refused",
      message: expect.stringContaining("already approved"),
    });
  });
});

describe("[POLICY] what-if over recorded calls", () => {
  it("a draft rule that denies *.delete_* names the recorded calls it would change; the CLI exits 1", async () => {
    const client = await connect(await key("auto"));
    const envelope = await execute(client, {
      code: `import { delete_entry } from "toolstore/ledger";
export default async () => delete_entry({ name: "old" });`,
    });
    await client.close();
    expect(envelope.ok).toBe(true);
    expect(hits("delete")).toBe(1);
    await engine.flush();

    const draft = { add: [{ effect: "deny" as const, pattern: "*.delete_*" }] };
    const result = await whatIfRules(db, { draft, last: 100 });
    expect(result.changed).toBe(1);
    expect(result.transitions).toEqual([{ from: "allow", to: "deny", count: 1 }]);
    expect(result.changes[0]).toMatchObject({
      capability: "ledger.delete_entry",
      args: { name: "old" },
      before: "allow",
      after: "deny",
      mode: "auto",
    });

    const draftFile = path.join(dir, "draft.json");
    fs.writeFileSync(draftFile, JSON.stringify(draft));
    const env = { ...process.env, DATABASE_URL: `file:${dbFile}` };
    const tsx = path.join(root, "node_modules", ".bin", "tsx");
    const cli = spawnSync(tsx, ["server/cli/main.ts", "rules", "what-if", draftFile, "--last", "100"], {
      cwd: root,
      env,
      encoding: "utf8",
    });
    expect(cli.stdout).toContain("ledger.delete_entry  allow -> deny");
    expect(cli.status).toBe(1);

    fs.writeFileSync(draftFile, JSON.stringify({ add: [{ effect: "deny", pattern: "nothing.*" }] }));
    const none = spawnSync(tsx, ["server/cli/main.ts", "rules", "what-if", draftFile], {
      cwd: root,
      env,
      encoding: "utf8",
    });
    expect(none.stdout).toContain("0 would be decided differently");
    expect(none.status).toBe(0);
  }, 60_000);
});

describe("[POLICY] shadow rules, budgets and examples", () => {
  it("a shadow rule records 'would deny' and changes no decision", async () => {
    const rule = await createPolicyRule(db, userId, {
      effect: "deny",
      pattern: "ledger.write_entry",
      shadow: true,
      description: "watch writes",
    });
    await ruleCache();
    const before = hits("write");
    const client = await connect(await key("auto"));
    const envelope = await execute(client, {
      code: `import { write_entry } from "toolstore/ledger";
export default async () => write_entry({ name: "shadowed", amount: 5 });`,
    });
    await client.close();
    expect(envelope.ok).toBe(true);
    expect(envelope.calls).toEqual([
      expect.objectContaining({ capability: "ledger.write_entry", decision: "allow" }),
    ]);
    expect(hits("write")).toBe(before + 1);
    const shadowHits = await db.policyShadowHit.findMany({ where: { ruleId: rule.id } });
    expect(shadowHits).toEqual([
      expect.objectContaining({ decision: "allow", would: "deny", capability: "ledger.write_entry" }),
    ]);
    expect((await listPolicyRules(db)).find((r) => r.id === rule.id)?.shadowHits).toBe(1);
    await deletePolicyRule(db, rule.id);
  });

  it("a budget of 2 calls per run asks at the third call, and the error names the budget", async () => {
    const rule = await createPolicyRule(db, userId, {
      effect: "ask",
      pattern: "ledger.write_entry",
      budget: { limit: 2, per: "run" },
    });
    await ruleCache();
    const approver = answerApprovals(engine, db, userId, () => "deny");
    const before = hits("write");
    const client = await connect(await key("auto"));
    const code = `import { write_entry } from "toolstore/ledger";
export default async function () {
  const out = [];
  for (const name of ["x", "y", "z"]) {
    try { await write_entry({ name, amount: 1 }); out.push("ran"); } catch (e) { out.push({ error: e.error, budget: e.budget }); }
  }
  return out;
}`;
    const first = await execute(client, { code });
    // The budget is per run: the next run has its own two calls.
    const second = await execute(client, { code });
    await approver.stop();
    await client.close();
    const refused = {
      error: "budget_exceeded",
      budget: { ruleId: rule.id, pattern: "ledger.write_entry", limit: 2, per: "run" },
    };
    expect(first.result).toEqual(["ran", "ran", refused]);
    expect(second.result).toEqual(["ran", "ran", refused]);
    expect(approver.asked.map((a) => a.args)).toEqual([
      { amount: 1, name: "z" },
      { amount: 1, name: "z" },
    ]);
    expect(hits("write")).toBe(before + 4);
    await deletePolicyRule(db, rule.id);
  });

  it("a rule with a failing example cannot be saved, and the error names the example", async () => {
    await expect(
      createPolicyRule(db, userId, {
        effect: "deny",
        pattern: "*.write_*",
        examples: {
          match: [{ capability: "ledger.write_entry", args: {} }],
          noMatch: [
            { capability: "ledger.delete_entry", args: {} },
            { capability: "ledger.write_entry", args: { name: "x" } },
          ],
        },
      }),
    ).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining(
        'example that must not match #2 (ledger.write_entry {"name":"x"}) matches the rule',
      ),
    });
    const saved = await createPolicyRule(db, userId, {
      effect: "deny",
      pattern: "*.write_*",
      conditions: [{ path: "name", op: "eq", value: "x" }],
      examples: {
        match: [{ capability: "ledger.write_entry", args: { name: "x" } }],
        noMatch: [{ capability: "ledger.write_entry", args: { name: "y" } }],
      },
    });
    expect(saved.examples?.match).toHaveLength(1);
    await deletePolicyRule(db, saved.id);
  });
});
