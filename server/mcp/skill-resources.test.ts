/**
 * Skills over MCP with the SDK's own Client: every skill file is a skill:// resource with a MIME
 * type, size and digest; skill://index.json carries the entries; a key without toolstore/skills
 * sees none of them.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "../engine";
import { syncSkillsFolder } from "../modules/skills";
import { createApiKey } from "../services/api-keys";
import { createMcpHttpHandler } from "./http";
import { createMcpBackend } from "./mcp-backend";
import { serveFetchHandler } from "./node-adapter";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-mcp-skills-"));
let db: Db;
let engine: ServerEngine;
let server: { url: string; close(): Promise<void> };
let userId: string;

async function connect(modules: string[]) {
  const { key } = await createApiKey(db, userId, {
    name: `k-${modules.join("-")}`,
    mode: "default",
    modules,
  });
  const client = new Client({ name: "vitest", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "mcp.db") };
  await deployMigrations(target);
  db = createDb(target);
  userId = (
    await db.user.create({ data: { username: "o", displayName: "O", role: "admin", passwordHash: "x" } })
  ).id;
  expect((await syncSkillsFolder(db, path.resolve("skills"))).failed).toEqual([]);
  engine = await startServerEngine({ db, ports: createPrismaPorts(db), workers: 1 });
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
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("skills as MCP resources", () => {
  it("[MCP]: lists every skill file as a skill:// resource with MIME type, size and digest", async () => {
    const client = await connect(["*"]);
    const { resources } = await client.listResources();
    const skillMd = resources.find((r) => r.uri === "skill://internal-comms/SKILL.md");
    const bytes = fs.readFileSync("skills/internal-comms/SKILL.md");
    expect(skillMd).toMatchObject({
      mimeType: "text/markdown",
      size: bytes.length,
      title: "internal-comms",
      _meta: {
        "io.modelcontextprotocol/skills": {
          digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
        },
      },
    });
    expect(resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining([
        "toolstore://capabilities",
        "skill://index.json",
        "skill://csv-tables/scripts/to-markdown.js",
        "skill://internal-comms/examples/3p-updates.md",
        "skill://internal-comms/LICENSE.txt",
      ]),
    );
    expect(resources.find((r) => r.uri === "skill://csv-tables/scripts/to-markdown.js")?.mimeType).toBe(
      "text/javascript",
    );
    await client.close();
  });

  it("[MCP]: reads SKILL.md and a nested file, and the index entry's digests match what is read", async () => {
    const client = await connect(["skills"]);
    const read = await client.readResource({ uri: "skill://internal-comms/SKILL.md" });
    const text = (read.contents[0] as { text: string }).text;
    expect(text).toBe(fs.readFileSync("skills/internal-comms/SKILL.md", "utf8"));
    const nested = await client.readResource({ uri: "skill://internal-comms/examples/general-comms.md" });
    expect(nested.contents[0]).toMatchObject({
      mimeType: "text/markdown",
      text: expect.stringContaining("active voice"),
    });

    const index = await client.readResource({ uri: "skill://index.json" });
    const { skills } = JSON.parse((index.contents[0] as { text: string }).text) as {
      skills: Array<{
        uri: string;
        frontmatter: Record<string, unknown>;
        resources: Array<{ uri: string; digest: string; size: number }>;
      }>;
    };
    const entry = skills.find((s) => s.uri === "skill://internal-comms/SKILL.md");
    expect(entry?.frontmatter).toMatchObject({
      name: "internal-comms",
      license: "Complete terms in LICENSE.txt",
    });
    const manifest = entry?.resources.find((r) => r.uri === "skill://internal-comms/SKILL.md");
    expect(manifest?.digest).toBe(`sha256:${createHash("sha256").update(text).digest("hex")}`);
    await expect(client.readResource({ uri: "skill://internal-comms/nope.md" })).rejects.toThrow(
      /no skill file/,
    );
    await client.close();
  });

  it("[MCP]: skills/list and skills/get return the same entries (SEP-2640 methods)", async () => {
    const client = await connect(["*"]);
    const entrySchema = z.object({ uri: z.string(), frontmatter: z.record(z.string(), z.unknown()) }).loose();
    const listed = await client.request(
      { method: "skills/list", params: {} },
      z.object({ skills: z.array(entrySchema) }),
    );
    expect(listed.skills.map((s) => s.uri)).toEqual([
      "skill://csv-tables/SKILL.md",
      "skill://internal-comms/SKILL.md",
      "skill://toolset-authoring/SKILL.md",
    ]);
    const got = await client.request(
      { method: "skills/get", params: { uri: "skill://csv-tables/SKILL.md" } },
      z.object({ skill: entrySchema }),
    );
    expect(got.skill).toEqual(listed.skills[0]);
    await expect(
      client.request({ method: "skills/get", params: { uri: "skill://nope/SKILL.md" } }, z.object({})),
    ).rejects.toThrow(/no skill at skill:\/\/nope/);
    await client.close();
  });

  it("[MCP]: a key that does not mount toolstore/skills sees no skill resources", async () => {
    const client = await connect(["calculator"]);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(["toolstore://capabilities"]);
    await client.close();
  });
});
