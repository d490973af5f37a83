/**
 * Who may call what, for every procedure of every router, through createCaller: anonymous,
 * viewer, approver and admin each either pass the role check or are refused (UNAUTHORIZED /
 * FORBIDDEN). The table below is the policy; a procedure missing from it fails the test.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { type ServerEngine, startServerEngine } from "../engine";
import type { Role, SessionUser } from "../services/auth";
import { appRouter, createCaller } from "./root";
import { CSRF_HEADER } from "./trpc";

type Min = "public" | Role;

const POLICY: Record<string, Min> = {
  "auth.me": "public",
  "auth.setupTokenValid": "public",
  "auth.completeSetup": "public",
  "auth.signIn": "public",
  "auth.signOut": "public",
  "apiKeys.list": "admin",
  "apiKeys.create": "admin",
  "apiKeys.revoke": "admin",
  "apiKeys.grants": "admin",
  "apiKeys.revokeGrant": "admin",
  "users.list": "admin",
  "users.create": "admin",
  "users.setRole": "admin",
  "events.live": "viewer",
  "events.announce": "admin",
  "approvals.queue": "viewer",
  "approvals.historyFilterOptions": "viewer",
  "approvals.card": "viewer",
  "approvals.pendingCount": "viewer",
  "approvals.decide": "approver",
  "approvals.revokeSessionGrants": "approver",
  "playground.modules": "viewer",
  "playground.state": "viewer",
  "playground.save": "viewer",
  "playground.run": "approver",
  "playground.cancel": "approver",
  "playground.runPlan": "approver",
  "playground.client": "viewer",
  "playground.answer": "approver",
  "runs.get": "viewer",
  "runs.watch": "viewer",
  "capabilities.list": "viewer",
  "capabilities.modules": "viewer",
  "capabilities.libraries": "viewer",
  "capabilities.schema": "viewer",
  "capabilities.history": "viewer",
  "capabilities.changeCategory": "admin",
  "capabilities.decidePending": "admin",
  "capabilities.reviews": "viewer",
  "capabilities.acceptReview": "admin",
  "rules.list": "viewer",
  "rules.create": "admin",
  "rules.update": "admin",
  "rules.setEnabled": "admin",
  "rules.delete": "admin",
  "rules.defaultMode": "viewer",
  "rules.setDefaultMode": "admin",
  "rules.testCall": "viewer",
  "rules.whatIf": "viewer",
  "toolsets.list": "viewer",
  "toolsets.get": "viewer",
  "toolsets.diff": "viewer",
  "toolsets.sync": "admin",
  "toolsets.publishFolder": "admin",
  "toolsets.upload": "admin",
  "toolsets.setEnv": "admin",
  "toolsets.unsetEnv": "admin",
  "toolsets.updateSettings": "admin",
  "toolsets.tryIt": "approver",
  "mcpServers.list": "viewer",
  "mcpServers.oauth": "viewer",
  "mcpServers.needsReauth": "viewer",
  "mcpServers.authorize": "admin",
  "mcpServers.get": "viewer",
  "mcpServers.save": "admin",
  "mcpServers.import": "admin",
  "mcpServers.refresh": "admin",
  "mcpServers.setSecret": "admin",
  "mcpServers.categorize": "admin",
  "mcpServers.remove": "admin",
  "skills.list": "viewer",
  "skills.get": "viewer",
  "skills.file": "viewer",
  "skills.diff": "viewer",
  "skills.upload": "admin",
  "skills.remove": "admin",
  "notifications.settings": "viewer",
  "notifications.addWebhook": "approver",
  "notifications.addEmail": "approver",
  "notifications.subscribePush": "approver",
  "notifications.unsubscribePush": "approver",
  "notifications.remove": "approver",
  "notifications.setEnabled": "approver",
  "notifications.test": "approver",
  "notifications.setFilter": "approver",
};

const RANK: Record<Min, number> = { public: 0, viewer: 1, approver: 2, admin: 3 };
const CALLERS = ["anonymous", "viewer", "approver", "admin"] as const;
type CallerKind = (typeof CALLERS)[number];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-roles-"));
let db: Db;
let engine: ServerEngine;
const users: Partial<Record<Role, SessionUser>> = {};

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "roles.db") };
  await deployMigrations(target);
  db = createDb(target);
  for (const role of ["viewer", "approver", "admin"] as const) {
    const row = await db.user.create({
      data: { username: role, displayName: role, role, passwordHash: "x" },
    });
    users[role] = { id: row.id, username: role, displayName: role, role, sessionId: `s-${role}` };
  }
  engine = await startServerEngine({ db, workers: 1 });
});

afterAll(async () => {
  await engine?.shutdown();
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

function callerFor(kind: CallerKind) {
  const req = new Request("http://127.0.0.1/api/trpc", {
    method: "POST",
    headers: { [CSRF_HEADER]: "1", host: "127.0.0.1" },
  });
  return createCaller({
    db,
    user: kind === "anonymous" ? null : (users[kind] ?? null),
    sessionToken: undefined,
    req,
    resHeaders: new Headers(),
    engine: async () => engine,
  });
}

/** Calls with no input: a permitted caller gets past the role check (to BAD_REQUEST or a result). */
async function outcome(kind: CallerKind, procedure: string): Promise<string> {
  const target = procedure
    .split(".")
    .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], callerFor(kind)) as (
    input?: unknown,
  ) => Promise<unknown>;
  try {
    const result = await target(undefined);
    // A subscription hands back its stream without starting it; close it.
    const stream = result as { [Symbol.asyncIterator]?: unknown; return?: () => Promise<unknown> } | null;
    if (stream && typeof stream === "object" && Symbol.asyncIterator in stream) await stream.return?.();
    return "passed";
  } catch (error) {
    if (error instanceof TRPCError && (error.code === "UNAUTHORIZED" || error.code === "FORBIDDEN")) {
      return error.code;
    }
    return "passed";
  }
}

describe("roles, through createCaller", () => {
  it("the policy names every procedure of every router", () => {
    expect(Object.keys(appRouter._def.procedures).sort()).toEqual(Object.keys(POLICY).sort());
  });

  for (const [procedure, min] of Object.entries(POLICY)) {
    it(`${procedure}: ${min === "public" ? "anyone" : `${min} and above`}`, async () => {
      const got: Record<string, string> = {};
      const want: Record<string, string> = {};
      for (const kind of CALLERS) {
        got[kind] = await outcome(kind, procedure);
        const rank = kind === "anonymous" ? 0 : RANK[kind];
        want[kind] = rank >= RANK[min] ? "passed" : kind === "anonymous" ? "UNAUTHORIZED" : "FORBIDDEN";
      }
      expect(got).toEqual(want);
    });
  }
});
