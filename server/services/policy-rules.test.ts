import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../core/errors";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { categoryHistory, changeCategory } from "./capability-categories";
import {
  createPolicyRule,
  getDefaultMode,
  listPolicyRules,
  setDefaultMode,
  setPolicyRuleEnabled,
  testGateCall,
} from "./policy-rules";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-rules-"));
let db: Db;
let userId: string;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "r.db") };
  await deployMigrations(target);
  db = createDb(target);
  userId = (
    await db.user.create({ data: { username: "ada", displayName: "Ada", role: "admin", passwordHash: "x" } })
  ).id;
  await db.capability.create({
    data: {
      name: "http.fetch",
      module: "http",
      exportName: "fetch",
      source: "builtin",
      category: "external",
      declaredCategory: "external",
      versionHash: "v1",
    },
  });
});
afterAll(async () => {
  await db.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
  return "no error";
}

describe("policy rules", () => {
  it("explains a decision: an allow rule with a condition skips the prompt only where it holds", async () => {
    const rule = await createPolicyRule(db, userId, {
      effect: "allow",
      pattern: "http.*",
      conditions: [{ path: "url", op: "startsWith", value: "https://api.example.com/" }],
      description: "example API",
    });
    expect(rule.createdBy).toBe("ada");
    const inside = await testGateCall(db, {
      capability: "http.fetch",
      argsJson: '{"url":"https://api.example.com/v1"}',
      mode: "default",
    });
    expect(inside.evaluation).toMatchObject({ decision: "allow", ruleId: rule.id, via: "rule" });
    expect(inside.tableCell).toBe("ask");
    const outside = await testGateCall(db, {
      capability: "http.fetch",
      argsJson: '{"url":"https://evil.example/"}',
      mode: "default",
    });
    expect(outside.evaluation.decision).toBe("ask");
    expect(outside.rules[0]).toMatchObject({ nameMatches: true, matches: false });
    expect(outside.rules[0]?.conditions[0]?.holds).toBe(false);
  });

  it("a deny rule wins even in auto mode; a disabled rule is ignored", async () => {
    const deny = await createPolicyRule(db, userId, { effect: "deny", pattern: "http.fetch" });
    const denied = await testGateCall(db, { capability: "http.fetch", argsJson: "{}", mode: "auto" });
    expect(denied.evaluation).toMatchObject({ decision: "deny", ruleId: deny.id });
    await setPolicyRuleEnabled(db, deny.id, false);
    const allowed = await testGateCall(db, { capability: "http.fetch", argsJson: "{}", mode: "auto" });
    expect(allowed.evaluation.decision).toBe("allow");
    expect((await listPolicyRules(db))[0]?.effect).toBe("deny");
  });

  it("refuses bad rules, bad JSON and unknown capabilities with their codes", async () => {
    expect(
      await codeOf(
        createPolicyRule(db, userId, {
          effect: "ask",
          pattern: "x.*",
          conditions: [{ path: "q", op: "matches", value: "(" }],
        }),
      ),
    ).toBe("BAD_INPUT");
    expect(await codeOf(createPolicyRule(db, userId, { effect: "ask", pattern: "two words" }))).toBe(
      "BAD_INPUT",
    );
    expect(await codeOf(testGateCall(db, { capability: "http.fetch", argsJson: "{", mode: "plan" }))).toBe(
      "BAD_INPUT",
    );
    expect(await codeOf(testGateCall(db, { capability: "nope.x", argsJson: "{}", mode: "plan" }))).toBe(
      "CAPABILITY_UNKNOWN",
    );
  });

  it("keeps the default mode", async () => {
    expect(await getDefaultMode(db)).toBe("default");
    await setDefaultMode(db, "plan");
    expect(await getDefaultMode(db)).toBe("plan");
  });
});

describe("category changes", () => {
  it("records who, from, to and why; the gate sees the new category", async () => {
    await changeCategory(db, userId, { capability: "http.fetch", category: "read", reason: "mirror only" });
    const [change] = await categoryHistory(db, { capability: "http.fetch" });
    expect(change).toMatchObject({ fromCategory: "external", toCategory: "read", changedBy: "ada" });
    const result = await testGateCall(db, { capability: "http.fetch", argsJson: "{}", mode: "plan" });
    expect(result.category).toBe("read");
    expect(
      await codeOf(
        changeCategory(db, userId, { capability: "http.fetch", category: "read", reason: "again" }),
      ),
    ).toBe("BAD_INPUT");
    expect(
      await codeOf(changeCategory(db, userId, { capability: "http.fetch", category: "write", reason: "" })),
    ).toBe("BAD_INPUT");
  });
});
