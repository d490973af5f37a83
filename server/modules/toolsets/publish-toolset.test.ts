import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../../db";
import { deployMigrations } from "../../db/migrate";
import {
  categoryHistory,
  decidePendingCategory,
  listCapabilities,
} from "../../services/capability-categories";
import {
  currentVersionHash,
  diffStoredVersions,
  getToolset,
  listToolsets,
  publishToolset,
  setToolsetEnvVar,
  syncToolsetsFolder,
  unsetToolsetEnvVar,
  updateToolsetSettings,
} from "./index";

const TOOLSETS = path.resolve(import.meta.dirname, "../../../toolsets");
const dir = mkdtempSync(path.join(tmpdir(), "toolstore-toolsets-"));
let db: Db;
let adminId: string;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "t.db") };
  await deployMigrations(target);
  db = createDb(target);
  adminId = (
    await db.user.create({
      data: { username: "admin", displayName: "Admin", role: "admin", passwordHash: "x" },
    })
  ).id;
});

afterAll(async () => {
  await db.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

const V1 = `/**
 * Greets people.
 * @hosts api.example.com
 * @timeout 4000
 * @secret API_KEY token for the greeting service
 */

/** Greets someone.
 * @tool read */
export function greet(name: string): string { return "Hello, " + name; }

/** Says goodbye.
 * @tool read */
export function bye(name: string): string { return "Bye, " + name; }
`;

const V2 = `/**
 * Greets people.
 * @hosts api.example.com, api2.example.com
 * @timeout 4000
 * @secret API_KEY token for the greeting service
 */

/** Greets someone, politely if asked.
 * @tool external */
export function greet(name: string, polite = false): string { return (polite ? "Good day, " : "Hello, ") + name; }
`;

const DOC = "# greeter\n\n`greet` greets, `bye` says goodbye.\n";

describe("[TOOLSETS] publish", () => {
  it("creates a version and capabilities with the declared categories and settings", async () => {
    const result = await publishToolset(db, {
      name: "greeter",
      files: { doc: DOC, source: V1 },
      origin: "upload",
      userId: adminId,
    });
    expect(result).toMatchObject({ status: "created", name: "greeter", version: 1, pendingCategories: [] });
    expect(result.message).toContain("published greeter v1");
    expect(result.message).toContain("set its environment in the console: API_KEY (secret)");
    const detail = await getToolset(db, "greeter");
    expect(detail).toMatchObject({
      version: 1,
      timeoutMs: 4000,
      allowedHosts: ["api.example.com"],
      description: "Greets people.",
      capabilities: [
        {
          name: "greeter.bye",
          category: "read",
          declaredCategory: "read",
          pendingCategory: null,
          active: true,
        },
        {
          name: "greeter.greet",
          category: "read",
          declaredCategory: "read",
          pendingCategory: null,
          active: true,
        },
      ],
    });
    expect(await currentVersionHash(db, "greeter.greet")).toBe(result.contentHash);
    expect(await categoryHistory(db, { capability: "greeter.greet" })).toEqual([
      expect.objectContaining({
        fromCategory: null,
        toCategory: "read",
        changedBy: "admin",
        reason: "first published in greeter v1 (declared in toolset.ts)",
      }),
    ]);
  });

  it("republishing the same content is a no-op with a message", async () => {
    const again = await publishToolset(db, {
      name: "greeter",
      files: { doc: DOC, source: V1 },
      origin: "cli",
    });
    expect(again.status).toBe("unchanged");
    expect(again.message).toMatch(/^greeter is already at v1 \(hash [0-9a-f]{12}\); nothing published$/);
    expect((await getToolset(db, "greeter")).versions).toHaveLength(1);
  });

  it("a changed signature shows the diff; a changed category waits; a removed binding goes inactive; the hash moves", async () => {
    await updateToolsetSettings(db, "greeter", { allowedHosts: ["api.example.com", "mirror.example.org"] });
    const before = await currentVersionHash(db, "greeter.greet");
    const result = await publishToolset(db, {
      name: "greeter",
      files: { doc: DOC, source: V2 },
      origin: "cli",
    });
    expect(result.status).toBe("updated");
    expect(result.previousHash).toBe(before);
    expect(result.changes).toEqual([
      "- bye [read]  bye({ name: string })",
      "~ greet signature:\n    was: greet({ name: string })\n    now: greet({ name: string, polite?: boolean = false })",
      "~ greet category: read -> external",
      "~ greet description changed",
      "~ @hosts: +api2.example.com",
    ]);
    expect(result.pendingCategories).toEqual([
      { capability: "greeter.greet", current: "read", declared: "external" },
    ]);
    expect(result.message).toContain("grants and allow rules bound to the previous version no longer apply");
    expect(result.message).toContain(
      "category change waits for an admin: greeter.greet read -> external (stays read until accepted)",
    );

    const detail = await getToolset(db, "greeter");
    expect(detail.version).toBe(2);
    // Console additions stay; newly declared hosts are added.
    expect(detail.allowedHosts).toEqual(["api.example.com", "mirror.example.org", "api2.example.com"]);
    expect(detail.capabilities).toEqual([
      expect.objectContaining({ name: "greeter.bye", active: false }),
      expect.objectContaining({
        name: "greeter.greet",
        category: "read",
        declaredCategory: "external",
        pendingCategory: "external",
        active: true,
      }),
    ]);
    const after = await currentVersionHash(db, "greeter.greet");
    expect(after).toBe(result.contentHash);
    expect(after).not.toBe(before);
    expect(await currentVersionHash(db, "greeter.bye")).toBeNull();

    const stored = await diffStoredVersions(db, "greeter", 1);
    expect(stored.lines).toEqual(result.changes);
  });

  it("an admin accepts the pending category (console service), which is recorded; a second decision conflicts", async () => {
    const pending = (await listCapabilities(db)).filter((c) => c.pendingCategory !== null);
    expect(pending).toEqual([
      expect.objectContaining({ name: "greeter.greet", category: "read", pendingCategory: "external" }),
    ]);
    await decidePendingCategory(db, adminId, {
      capability: "greeter.greet",
      accept: true,
      reason: "it calls out now",
    });
    await expect(
      decidePendingCategory(db, adminId, { capability: "greeter.greet", accept: true }),
    ).rejects.toMatchObject({
      code: "CONFLICT",
    });
    const history = await categoryHistory(db, { capability: "greeter.greet" });
    expect(history[0]).toMatchObject({
      fromCategory: "read",
      toCategory: "external",
      reason: "it calls out now",
      changedBy: "admin",
    });
    expect((await getToolset(db, "greeter")).capabilities[1]).toMatchObject({
      category: "external",
      pendingCategory: null,
    });
  });

  it("a kept category is not raised again while the declaration stays", async () => {
    const v3 = V2.replace("@tool external", "@tool write");
    const raised = await publishToolset(db, {
      name: "greeter",
      files: { doc: DOC, source: v3 },
      origin: "cli",
    });
    expect(raised.pendingCategories).toEqual([
      { capability: "greeter.greet", current: "external", declared: "write" },
    ]);
    await decidePendingCategory(db, adminId, { capability: "greeter.greet", accept: false });
    const v4 = v3.replace("politely if asked", "politely when asked");
    const result = await publishToolset(db, {
      name: "greeter",
      files: { doc: DOC, source: v4 },
      origin: "cli",
    });
    expect(result.pendingCategories).toEqual([]);
    expect((await getToolset(db, "greeter")).capabilities[1]).toMatchObject({
      category: "external",
      declaredCategory: "write",
      pendingCategory: null,
    });
  });

  it("refuses an invalid upload with TOOLSET_INVALID and the file:line errors", async () => {
    await expect(
      publishToolset(db, {
        name: "greeter",
        files: { doc: DOC, source: "/** x\n * @tool read */\nexport function f(d: Date) {}" },
        origin: "upload",
      }),
    ).rejects.toMatchObject({
      code: "TOOLSET_INVALID",
      details: { errors: [expect.objectContaining({ file: "toolset.ts", line: 3 })] },
    });
  });
});

describe("[TOOLSETS] settings and secrets", () => {
  it("stores a secret but never returns it; plain variables are shown", async () => {
    const secret = await setToolsetEnvVar(db, {
      toolset: "greeter",
      name: "API_KEY",
      value: "sk-very-secret",
    });
    expect(secret).toMatchObject({
      name: "API_KEY",
      secret: true,
      value: null,
      display: "••••••••",
      set: true,
      declared: true,
    });
    const plain = await setToolsetEnvVar(db, { toolset: "greeter", name: "LANG", value: "en" });
    expect(plain).toMatchObject({ secret: false, value: "en", display: "en", declared: false });
    const detail = await getToolset(db, "greeter");
    expect(JSON.stringify(detail)).not.toContain("sk-very-secret");
    expect(JSON.stringify(await listToolsets(db))).not.toContain("sk-very-secret");
    await expect(
      setToolsetEnvVar(db, { toolset: "greeter", name: "API_KEY", value: "abc" }),
    ).rejects.toMatchObject({ code: "BAD_INPUT" });
    await expect(
      setToolsetEnvVar(db, { toolset: "greeter", name: "lower", value: "x" }),
    ).rejects.toMatchObject({ code: "BAD_INPUT" });
    await unsetToolsetEnvVar(db, { toolset: "greeter", name: "LANG" });
    await expect(unsetToolsetEnvVar(db, { toolset: "greeter", name: "LANG" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("validates timeout and hosts", async () => {
    expect(
      await updateToolsetSettings(db, "greeter", {
        timeoutMs: 2500,
        allowedHosts: ["API.example.com", "*.cdn.net", "localhost:8080"],
      }),
    ).toEqual({
      timeoutMs: 2500,
      allowedHosts: ["api.example.com", "*.cdn.net", "localhost:8080"],
    });
    await expect(updateToolsetSettings(db, "greeter", { timeoutMs: 5 })).rejects.toMatchObject({
      code: "BAD_INPUT",
    });
    await expect(
      updateToolsetSettings(db, "greeter", { allowedHosts: ["https://x.com/path"] }),
    ).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("not a host name: https://x.com/path"),
    });
    await expect(updateToolsetSettings(db, "nope", {})).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("[TOOLSETS] sync a folder", () => {
  // textkit is Python: its first parse starts a Pyodide worker (seconds on a loaded machine).
  it("publishes every example, reports a broken folder and skips it, and is idempotent", {
    timeout: 180_000,
  }, async () => {
    const root = path.join(dir, "toolsets");
    cpSync(TOOLSETS, root, { recursive: true });
    mkdirSync(path.join(root, "broken"));
    writeFileSync(path.join(root, "broken", "doc.md"), "");
    writeFileSync(
      path.join(root, "broken", "toolset.ts"),
      readFileSync(path.join(TOOLSETS, "units", "toolset.ts"), "utf8"),
    );
    const first = await syncToolsetsFolder(db, root);
    expect(first.published.map((p) => [p.name, p.status])).toEqual([
      ["calculator", "created"],
      ["chart", "created"],
      ["lisp", "created"],
      ["textkit", "created"],
      ["units", "created"],
      ["weather", "created"],
      ["webhook", "created"],
    ]);
    expect(first.failed).toEqual([
      expect.objectContaining({
        name: "broken",
        errors: [expect.objectContaining({ file: "doc.md", message: "doc.md is empty" })],
      }),
    ]);
    expect(first.summary).toBe(`toolsets from ${root}: 7 loaded (7 new), 1 failed: broken`);
    const second = await syncToolsetsFolder(db, root);
    expect(second.summary).toBe(`toolsets from ${root}: 7 loaded (7 unchanged), 1 failed: broken`);
    const weather = (await listToolsets(db)).find((t) => t.name === "weather");
    expect(weather).toMatchObject({
      version: 1,
      bindingCount: 3,
      categories: ["external"],
      timeoutMs: 8000,
      missingEnv: ["BASE_URL", "GEOCODING_URL"],
    });
  });
});
