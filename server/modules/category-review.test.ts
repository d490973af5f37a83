import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { categoryHistory } from "../services/capability-categories";
import { acceptReview, listPendingReviews } from "./category-review";
import { SOURCE_PLUGINS } from "./index";
import { saveServer, syncServerTools } from "./mcp-servers";
import { publishToolset } from "./toolsets";

const dir = mkdtempSync(path.join(tmpdir(), "toolstore-review-"));
let db: Db;
let adminId: string;

const toolset = (category: string) => `/** Greets people. */

/** Greets someone.
 * @tool ${category} */
export function greet(name: string): string { return "Hello, " + name; }
`;
const DOC = "# greeter\n\n`greet` greets.\n";
const tool = (description: string) => ({
  name: "get-sum",
  description,
  inputSchema: { type: "object", properties: { a: { type: "number" } } },
  annotations: { readOnlyHint: true },
});

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

describe("[CATEGORIES] one review flow for every source", () => {
  it("lists a republished toolset's new category and an MCP tool beside it, each at its version", async () => {
    await publishToolset(db, {
      name: "greeter",
      files: { doc: DOC, source: toolset("read") },
      origin: "upload",
    });
    await publishToolset(db, {
      name: "greeter",
      files: { doc: DOC, source: toolset("write") },
      origin: "upload",
    });
    await saveServer(db, { name: "calc", transport: "http", url: "http://127.0.0.1:1/mcp" });
    await syncServerTools(db, "calc", [tool("Adds numbers")]);

    const items = await listPendingReviews(db, SOURCE_PLUGINS);
    expect(items.map((i) => [i.capability, i.source, i.current, i.proposed])).toEqual([
      ["calc.get_sum", "mcp", null, "read"],
      ["greeter.greet", "toolsets", "read", "write"],
    ]);
    expect(items.every((i) => i.hash.length >= 12)).toBe(true);
  });

  it("refuses an accept at a version that is no longer current, and names the fix", async () => {
    const [mcpItem] = await listPendingReviews(db, SOURCE_PLUGINS);
    await syncServerTools(db, "calc", [tool("Adds two numbers")]);
    await expect(
      acceptReview(db, SOURCE_PLUGINS, adminId, {
        capability: "calc.get_sum",
        hash: mcpItem?.hash ?? "",
        category: "read",
        reason: "reviewed the tool",
      }),
    ).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringContaining("review it again") });
  });

  it("accepts each source's item at its current version and records who and why", async () => {
    for (const item of await listPendingReviews(db, SOURCE_PLUGINS)) {
      const category = item.source === "mcp" ? "read" : "write";
      const done = await acceptReview(db, SOURCE_PLUGINS, adminId, {
        capability: item.capability,
        hash: item.hash,
        category,
        reason: "checked the code",
      });
      expect(done.current).toBe(category);
    }
    expect(await listPendingReviews(db, SOURCE_PLUGINS)).toEqual([]);
    const rows = await db.capability.findMany({
      where: { name: { in: ["calc.get_sum", "greeter.greet"] } },
      select: { name: true, category: true, pendingCategory: true, active: true },
      orderBy: { name: "asc" },
    });
    expect(rows).toEqual([
      { name: "calc.get_sum", category: "read", pendingCategory: null, active: true },
      { name: "greeter.greet", category: "write", pendingCategory: null, active: true },
    ]);
    const history = await categoryHistory(db, { capability: "greeter.greet" });
    expect(history[0]).toMatchObject({
      fromCategory: "read",
      toCategory: "write",
      reason: "checked the code",
    });
    expect((await categoryHistory(db, { capability: "calc.get_sum" }))[0]?.reason).toContain(
      "checked the code",
    );
  });

  it("says what to do for a capability nothing waits on", async () => {
    await expect(
      acceptReview(db, SOURCE_PLUGINS, adminId, {
        capability: "greeter.greet",
        hash: "x",
        category: "read",
        reason: "again",
      }),
    ).rejects.toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("categories pending") });
  });
});
