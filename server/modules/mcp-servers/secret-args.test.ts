/**
 * An MCP server's secrets are the admin's: `{{secret:NAME}}` in its env (and headers) is filled
 * once, at connect. A tool argument is the action's data and is never filled: an action that
 * passes `{{secret:UP_TOKEN}}` gets it to the upstream as that text (issue #32). The upstream is a
 * tiny stdio server this test writes, which records what it received.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../core/actions/engine";
import { builtinModules } from "../../core/capabilities/builtins";
import { testSession } from "../../core/testing/fixtures";
import { createMemoryPorts } from "../../core/testing/memory-ports";
import { createDb, type Db } from "../../db";
import { deployMigrations } from "../../db/migrate";
import { createCapabilityCategoryLookup } from "../../services/capability-categories";
import {
  categorizeTools,
  createMcpModuleSource,
  type McpModuleSource,
  parseCategorizeRule,
  saveServer,
  setServerSecret,
} from "./index";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const SDK = path.join(ROOT, "node_modules/@modelcontextprotocol/sdk/dist/esm");
const SECRET = 'up"st\\ream\nsecret-42';
const dir = mkdtempSync(path.join(tmpdir(), "toolstore-mcp-args-"));
const received = path.join(dir, "received.json");
let db: Db;
let engine: Engine;
let source: McpModuleSource;

const UPSTREAM = `
import { writeFileSync } from "node:fs";
import { McpServer } from ${JSON.stringify(`${SDK}/server/mcp.js`)};
import { StdioServerTransport } from ${JSON.stringify(`${SDK}/server/stdio.js`)};
import { createRequire } from "node:module";
const { z } = createRequire(${JSON.stringify(path.join(ROOT, "package.json"))})("zod");
const server = new McpServer({ name: "recorder", version: "1" });
server.registerTool("record", { description: "Records its argument.", inputSchema: { text: z.string() } }, async ({ text }) => {
  writeFileSync(${JSON.stringify(received)}, JSON.stringify({ text, env: process.env.UP_TOKEN }));
  return { content: [{ type: "text", text: "recorded " + text.length }] };
});
await server.connect(new StdioServerTransport());
`;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "m.db") };
  await deployMigrations(target);
  db = createDb(target);
  const script = path.join(dir, "upstream.mjs");
  writeFileSync(script, UPSTREAM);
  const ports = createMemoryPorts();
  source = createMcpModuleSource({ db, assets: ports.assets, idleMs: 60_000 });
  engine = createEngine({
    ports,
    instanceId: "mcp-args-test",
    modules: [builtinModules()],
    sources: [source],
    categories: createCapabilityCategoryLookup(db),
    approvalPollMs: 10,
    poolOptions: { workers: 1 },
  });
  await saveServer(db, {
    name: "recorder",
    transport: "stdio",
    command: process.execPath,
    args: [script],
    env: { UP_TOKEN: "{{secret:UP_TOKEN}}" },
  });
  await setServerSecret(db, "recorder", "UP_TOKEN", SECRET);
  await source.refresh("recorder");
  await categorizeTools(db, "recorder", [parseCategorizeRule("record=read")], null);
  engine.registry.invalidate();
}, 60_000);

afterAll(async () => {
  await engine?.close();
  await db?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe("[MCP SERVERS] an action's tool arguments are never filled", () => {
  it("the upstream gets {{secret:UP_TOKEN}} as text in the argument, and the value in its env", async () => {
    const { envelope } = await engine.run({
      code: `import { record } from "toolstore/recorder";
        export default async () => record({ text: "{{secret:UP_TOKEN}}" });`,
      session: testSession({ mode: "auto" }),
    });
    expect(envelope.ok, JSON.stringify(envelope.error)).toBe(true);
    const seen = JSON.parse(readFileSync(received, "utf8"));
    expect(seen.text).toBe("{{secret:UP_TOKEN}}");
    expect(seen.env).toBe(SECRET);
    expect(JSON.stringify(envelope)).not.toContain("st\\\\ream");
  });
});
