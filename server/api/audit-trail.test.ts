/**
 * Admin actions through the real tRPC routers (createCaller) land in the audit log with who,
 * what, before and after, and secret values never; gate decisions land there too.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import type { ServerEngine } from "../engine";
import { verifyAuditChain } from "../infra/audit-verify";
import { createPrismaDecisionSink } from "../infra/run-stores";
import { createWriteBatcher } from "../infra/write-batcher";
import { syncToolsetsFolder } from "../modules/toolsets";
import { createApiKey } from "../services/api-keys";
import type { SessionUser } from "../services/auth";
import { createCaller } from "./root";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-audit-trail-"));
const dbFile = path.join(dir, "trail.db");
process.env.DATABASE_URL = `file:${dbFile}`;
let db: Db;
let admin: SessionUser;

beforeAll(async () => {
  await deployMigrations({ provider: "sqlite", url: dbFile });
  db = createDb({ provider: "sqlite", url: dbFile });
  const row = await db.user.create({
    data: { username: "root-admin", displayName: "Root", role: "admin", passwordHash: "x" },
  });
  admin = { id: row.id, username: row.username, displayName: row.displayName, role: "admin" } as SessionUser;
  expect((await syncToolsetsFolder(db, path.resolve("toolsets"))).failed).toEqual([]);
}, 120_000);

afterAll(async () => {
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

function caller() {
  const req = new Request("http://127.0.0.1:3000/api/trpc", {
    method: "POST",
    headers: { "x-toolstore-csrf": "1", host: "127.0.0.1:3000", origin: "http://127.0.0.1:3000" },
  });
  // These admin mutations reach the engine only to refresh its registry after a settings write;
  // anything else they asked of it would fail loudly here.
  const registry = { invalidate() {} };
  const engine = () =>
    Promise.resolve(
      new Proxy({ registry } as unknown as ServerEngine, {
        get(target, name) {
          if (name === "registry") return registry;
          if (name === "then") return undefined;
          throw new Error(`the audit-trail test starts no engine (asked for ${String(name)})`);
        },
      }),
    );
  return createCaller({ db, user: admin, sessionToken: "t", req, resHeaders: new Headers(), engine });
}

async function entries(action: string) {
  return db.auditEntry.findMany({ where: { action }, orderBy: { seq: "asc" } });
}

describe("[AUDIT] admin actions", () => {
  it("revoking a key records who, the key before (not revoked) and after (revoked)", async () => {
    const key = await createApiKey(db, admin.id, { name: "to-revoke" });
    await caller().apiKeys.revoke({ id: key.id });
    const [entry] = await entries("apiKeys.revoke");
    expect(entry).toMatchObject({
      actorType: "user",
      actorId: admin.id,
      actorName: "root-admin",
      target: `api_key:${key.id}`,
    });
    expect(JSON.parse(entry?.before ?? "{}")).toMatchObject({ name: "to-revoke", revokedAt: null });
    expect(JSON.parse(entry?.after ?? "{}").revokedAt).toEqual(expect.any(String));
  });

  it("a rule change records the rule before and after; a failed action is recorded as failed", async () => {
    const rule = await caller().rules.create({
      effect: "deny",
      pattern: "webhook.*",
      description: "no hooks",
    });
    await caller().rules.setEnabled({ id: rule.id, enabled: false });
    const [entry] = await entries("rules.setEnabled");
    expect(JSON.parse(entry?.before ?? "{}")).toMatchObject({ pattern: "webhook.*", enabled: true });
    expect(JSON.parse(entry?.after ?? "{}")).toMatchObject({ enabled: false });
    await expect(caller().apiKeys.revoke({ id: "no-such-key" })).rejects.toThrow();
    const failed = (await entries("apiKeys.revoke")).at(-1);
    expect(JSON.parse(failed?.detail ?? "{}")).toMatchObject({ outcome: "error" });
  });

  it("setting a secret is recorded without its value", async () => {
    await caller().toolsets.setEnv({
      toolset: "webhook",
      name: "WEBHOOK_TOKEN",
      value: "very-secret-token-value",
    });
    const [entry] = await entries("toolsets.setEnv");
    expect(entry?.target).toBe("toolset:webhook/WEBHOOK_TOKEN");
    expect(JSON.parse(entry?.after ?? "{}")).toMatchObject({ name: "WEBHOOK_TOKEN", secret: true });
    const all = JSON.stringify(await db.auditEntry.findMany());
    expect(all).not.toContain("very-secret-token-value");
    expect(JSON.parse(entry?.detail ?? "{}").input.value).toBe("(hidden)");
  });

  it("gate decisions are recorded, and the chain verifies", async () => {
    const sink = createPrismaDecisionSink(db, createWriteBatcher(db));
    await sink.record({
      runId: null,
      sessionId: "s-1",
      capability: "webhook.send",
      category: "write",
      decision: "deny",
      reason: "deny rule",
      ruleId: null,
      approvalId: null,
      argsHash: "abc",
      ms: 1,
      at: Date.now(),
    });
    const [entry] = await entries("gate.deny");
    expect(entry).toMatchObject({ actorName: "gate", target: "webhook.send" });
    expect(JSON.parse(entry?.detail ?? "{}")).toMatchObject({ sessionId: "s-1", reason: "deny rule" });
    expect(await verifyAuditChain(db)).toMatchObject({ ok: true });
  });
});
