/**
 * Python toolsets over MCP, with the SDK's own Client against the real `/api/mcp` handler on
 * loopback, a real SQLite database and real Pyodide workers: the plan's calculator (§9, bare
 * `@tool`, so its category waits for review), the plan's weather toolset (§2.3) verbatim with its
 * host pointed at a local stand-in (host aliases), the plan's docker definition migrated to
 * toolset.py, and the shipped textkit example. Each call is checked in the envelope AND in the stored gate
 * decision of the MCP run.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateLegacyDocker } from "../core/python/migrate-docker";
import { createPythonRuntime, type PythonRuntime } from "../core/python/runtime";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "../engine";
import { publishToolset, updateToolsetSettings } from "../modules/toolsets";
import { createApiKey } from "../services/api-keys";
import { createMcpHttpHandler } from "./http";
import { createMcpBackend } from "./mcp-backend";
import { serveFetchHandler } from "./node-adapter";

const FIXTURES = path.resolve(import.meta.dirname, "../core/python/fixtures");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-mcp-python-"));
const root = path.join(dir, "toolsets");
let db: Db;
let engine: ServerEngine;
let python: PythonRuntime;
let server: { url: string; close(): Promise<void> };
let userId: string;
let weatherApi: http.Server;
const weatherSeen: string[] = [];

type Envelope = {
  ok: boolean;
  result?: unknown;
  error?: { kind: string; message: string };
  calls: { capability: string; category: string; decision: string; reason?: string }[];
};

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "mcp.db") };
  await deployMigrations(target);
  db = createDb(target);
  userId = (
    await db.user.create({ data: { username: "owner", displayName: "O", role: "admin", passwordHash: "x" } })
  ).id;
  // The "internet" for api.openweathermap.org: the runtime's egress sends that host here.
  weatherApi = http.createServer((req, res) => {
    weatherSeen.push(req.url ?? "");
    const q = new URL(req.url ?? "/", "http://x").searchParams.get("q");
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ name: q, main: { temp: 9 } }));
  });
  await new Promise<void>((r) => weatherApi.listen(0, "127.0.0.1", () => r()));
  const weatherOrigin = `http://127.0.0.1:${(weatherApi.address() as AddressInfo).port}`;
  python = createPythonRuntime({
    maxWorkers: 3,
    spareWorkers: 1,
    hostAliases: { "api.openweathermap.org": weatherOrigin },
  });

  // The plan's calculator (§9) verbatim, under its own module name beside the shipped toolsets.
  fs.cpSync(path.join(FIXTURES, "calculator"), path.join(root, "pycalc"), { recursive: true });
  fs.cpSync(path.join(FIXTURES, "weather"), path.join(root, "pyweather"), { recursive: true });
  fs.cpSync(path.resolve("toolsets/textkit"), path.join(root, "textkit"), { recursive: true });
  // The plan's docker definition (§9), migrated as `migrate-docker` would write it.
  const legacy = JSON.parse(fs.readFileSync(path.join(FIXTURES, "legacy", "calculator-docker.json"), "utf8"));
  const docker = await migrateLegacyDocker(legacy, { parsePython: python.parse, name: "calculator_docker" });
  expect(docker.validation.ok).toBe(true);
  fs.mkdirSync(path.join(root, "calculator_docker"));
  fs.writeFileSync(path.join(root, "calculator_docker", "toolset.py"), docker.files.source);
  fs.writeFileSync(path.join(root, "calculator_docker", "doc.md"), docker.files.doc);

  for (const name of fs.readdirSync(root)) {
    const published = await publishToolset(db, {
      dir: path.join(root, name),
      origin: "sync",
      parsePython: python.parse,
    });
    expect(published.status).toBe("created");
  }
  await updateToolsetSettings(db, "pyweather", { allowedHosts: ["api.openweathermap.org"] });
  engine = await startServerEngine({ db, ports: createPrismaPorts(db), approvalTtlMs: 60_000, python });
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
}, 180_000);

afterAll(async () => {
  await server?.close();
  await engine?.shutdown();
  await python?.close();
  await new Promise<void>((r) => (weatherApi ? weatherApi.close(() => r()) : r()));
  await db?.$disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function connect(mode: "default" | "auto") {
  const { key, id } = await createApiKey(db, userId, { name: `python-${mode}`, mode, modules: ["*"] });
  const client = new Client({ name: "vitest-python", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return { client, keyId: id };
}

async function executeCode(client: Client, code: string): Promise<Envelope> {
  const result = (await client.callTool({ name: "execute_code", arguments: { code } }, undefined, {
    timeout: 120_000,
  })) as { structuredContent?: Envelope; isError?: boolean };
  expect(result.isError).toBeFalsy();
  return result.structuredContent as Envelope;
}

/** The stored gate decisions of the newest MCP run of this key, with the run itself. */
async function lastRunDecisions(keyId: string) {
  const run = await db.actionRun.findFirst({
    where: { apiKeyId: keyId },
    orderBy: { startedAt: "desc" },
    select: { id: true, surface: true, status: true },
  });
  const decisions = await db.gateDecisionRecord.findMany({
    where: { runId: run?.id ?? "none" },
    orderBy: { createdAt: "asc" },
    select: { capability: true, category: true, decision: true, reason: true },
  });
  return { run, decisions };
}

describe("[MCP] Python toolsets", { timeout: 180_000 }, () => {
  it("execute_code imports the plan's calculator (toolset.py) and calls it through the gate", async () => {
    const { client, keyId } = await connect("auto");
    const envelope = await executeCode(
      client,
      `import { compute } from "toolstore/pycalc";
       export default async function () { return await compute({ a: 6, b: 7, op: "multiply" }); }`,
    );
    expect(envelope).toMatchObject({
      ok: true,
      result: { result: 42 },
      calls: [{ capability: "pycalc.compute", decision: "allow" }],
    });
    const { run, decisions } = await lastRunDecisions(keyId);
    expect(run).toMatchObject({ surface: "mcp", status: "ok" });
    expect(decisions).toEqual([
      expect.objectContaining({ capability: "pycalc.compute", category: "execute", decision: "allow" }),
    ]);
    await client.close();
  });

  it("execute_code runs the plan's weather toolset (§2.3, verbatim) against its declared host", async () => {
    const { client, keyId } = await connect("auto");
    const envelope = await executeCode(
      client,
      `import { get_weather } from "toolstore/pyweather";
       export default async function () { return await get_weather({ location: "Oslo" }); }`,
    );
    expect(envelope).toMatchObject({
      ok: true,
      result: { name: "Oslo", main: { temp: 9 } },
      calls: [{ capability: "pyweather.get_weather", decision: "allow" }],
    });
    expect(weatherSeen.some((u) => u.startsWith("/data/2.5/weather?") && u.includes("q=Oslo"))).toBe(true);
    const { run, decisions } = await lastRunDecisions(keyId);
    expect(run).toMatchObject({ surface: "mcp", status: "ok" });
    expect(decisions).toEqual([
      expect.objectContaining({
        capability: "pyweather.get_weather",
        category: "execute",
        decision: "allow",
      }),
    ]);
    await client.close();
  });

  it("in default mode the same call asks (bare @tool: category pending); the human's deny is the stored decision", async () => {
    const { client, keyId } = await connect("default");
    // Nobody answers: deny it from the queue as soon as it is pending.
    const denier = setInterval(async () => {
      const pending = await db.approval.findMany({ where: { status: "pending" }, select: { id: true } });
      for (const p of pending) {
        await engine.approvals
          .decide({ approvalId: p.id, answer: "deny", decidedBy: { userId, label: "owner" } })
          .catch(() => {});
      }
    }, 100);
    try {
      const envelope = await executeCode(
        client,
        `import { compute } from "toolstore/pycalc";
         export default async function () {
           try { return await compute({ a: 1, b: 2 }); } catch (e) { return { refused: e.error }; }
         }`,
      );
      expect(envelope).toMatchObject({ ok: true, result: { refused: "permission_denied" } });
      expect(envelope.calls[0]).toMatchObject({ capability: "pycalc.compute", decision: "deny" });
    } finally {
      clearInterval(denier);
    }
    // The stored decision is the outcome of the human's answer, and the approval row says who.
    const { run, decisions } = await lastRunDecisions(keyId);
    expect(decisions.map((d) => [d.capability, d.category, d.decision])).toEqual([
      ["pycalc.compute", "execute", "deny"],
    ]);
    const approvals = await db.approval.findMany({
      where: { runId: run?.id ?? "none" },
      select: { capability: true, status: true, decidedById: true },
    });
    expect(approvals).toEqual([{ capability: "pycalc.compute", status: "denied", decidedById: userId }]);
    await client.close();
  });

  it("store.execute without `function` runs the one binding of a migrated docker toolset; with several bindings `function` picks one", async () => {
    const { client, keyId } = await connect("auto");
    const envelope = await executeCode(
      client,
      `import { execute } from "toolstore/store";
       export default async function () {
         const docker = await execute({ tool_name: "calculator_docker", arguments: { a: 1, b: 2, op: "add" } });
         const words = await execute({ tool_name: "textkit", arguments: { function: "word_count", text: "one two three" } });
         let missing;
         try { await execute({ tool_name: "textkit", arguments: { text: "x" } }); } catch (e) { missing = e.message; }
         return { docker, words, missing };
       }`,
    );
    expect(envelope.ok).toBe(true);
    const result = envelope.result as { docker: unknown; words: { words: number }; missing: string };
    // The plan's docker code is `def main(a, b, op): ...`, which returns None.
    expect(result.docker).toBeNull();
    expect(result.words).toMatchObject({ words: 3 });
    expect(result.missing).toMatch(/function/);
    expect(result.missing).toContain("word_count");
    const { decisions } = await lastRunDecisions(keyId);
    const byCapability = decisions.map((d) => [d.capability, d.decision]);
    expect(byCapability).toContainEqual(["calculator_docker.main", "allow"]);
    expect(byCapability).toContainEqual(["textkit.word_count", "allow"]);
    await client.close();
  });
});
