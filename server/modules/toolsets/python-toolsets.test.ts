/**
 * Python toolsets through the whole engine: the plan's own examples (copied verbatim into
 * server/core/python/fixtures) validated with Python's ast in the sandbox, published into a real
 * database, imported by actions, gated, and called through store.execute. The weather toolset's
 * httpx calls reach a local HTTP server through the toolset's configured host.
 */

import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../core/actions/engine";
import { builtinModules } from "../../core/capabilities/builtins";
import { createPythonRuntime, type PythonRuntime } from "../../core/python/runtime";
import { createAllowlistFetch, isHostAllowed } from "../../core/sandbox/host-fetch";
import { createScriptedApprover, testSession } from "../../core/testing/fixtures";
import { createMemoryPorts, type MemoryPorts } from "../../core/testing/memory-ports";
import { readToolsetFolder, validateToolsetFiles } from "../../core/toolsets";
import { createDb, type Db } from "../../db";
import { deployMigrations } from "../../db/migrate";
import { createCapabilityCategoryLookup } from "../../services/capability-categories";
import { type LocalServer, sendJson, startLocalServer } from "../../toolset-examples/local-server";
import { createToolsetModuleSource, publishToolset, setToolsetEnvVar, updateToolsetSettings } from "./index";

const FIXTURES = path.resolve(import.meta.dirname, "../../core/python/fixtures");
const dir = mkdtempSync(path.join(tmpdir(), "toolstore-python-"));
const root = path.join(dir, "toolsets");
let db: Db;
let engine: Engine;
let ports: MemoryPorts;
let python: PythonRuntime;
let weatherApi: LocalServer;
const seen: { host: string; path: string; query: Record<string, string>; auth: string | null }[] = [];
let answers: ("once" | "session" | "deny")[] = [];
const approvalsAsked: string[] = [];

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "p.db") };
  await deployMigrations(target);
  db = createDb(target);
  cpSync(FIXTURES, root, { recursive: true });
  rmSync(path.join(root, "legacy"), { recursive: true });

  // The "internet": one local server answers for every host the toolsets name.
  weatherApi = await startLocalServer((req, res) => {
    seen.push({
      host: String(req.headers["x-original-host"] ?? ""),
      path: req.url.pathname,
      query: Object.fromEntries(req.url.searchParams),
      auth: (req.headers["x-api-key"] as string | undefined) ?? null,
    });
    if (req.url.searchParams.get("q") === "Nowhere") return sendJson(res, 404, { message: "city not found" });
    sendJson(res, 200, {
      name: req.url.searchParams.get("q") ?? req.url.searchParams.get("location"),
      main: { temp: 12.5, humidity: 80 },
      units: req.url.searchParams.get("units"),
      cnt: req.url.searchParams.get("cnt"),
    });
  });
  const local = createAllowlistFetch({ allowedHosts: ["127.0.0.1"], timeoutMs: 5000, maxBodyBytes: 1 << 20 });
  python = createPythonRuntime({
    maxWorkers: 3,
    spareWorkers: 1,
    // The toolset's own allow-list is checked first (by the runtime, and again here); only then is
    // the request sent on, to the local server instead of the real host.
    egress: (request) => async (req, signal) => {
      if (!isHostAllowed(req.url, request.allowedHosts)) throw new Error(`not allowed: ${req.url}`);
      const url = new URL(req.url);
      const local_url = `${weatherApi.baseUrl}${url.pathname}${url.search}`;
      return local(
        { ...req, url: local_url, headers: { ...req.headers, "x-original-host": url.host } },
        signal,
      );
    },
  });

  for (const name of ["weather", "calculator", "weather_api"]) {
    const result = await publishToolset(db, {
      dir: path.join(root, name),
      origin: "sync",
      parsePython: python.parse,
    });
    expect(result.status).toBe("created");
  }
  await updateToolsetSettings(db, "weather", { allowedHosts: ["api.openweathermap.org"] });
  await updateToolsetSettings(db, "weather_api", { allowedHosts: ["api.weather.com"] });

  ports = createMemoryPorts();
  engine = createEngine({
    ports,
    instanceId: "python-test",
    // Cold interpreter starts count against an action; on a loaded 2-core machine they are slow.
    limits: { deadlineMs: 150_000 },
    modules: [builtinModules()],
    sources: [createToolsetModuleSource({ db, runtimes: () => ({ typescript: engine.pool, python }) })],
    categories: createCapabilityCategoryLookup(db),
    registryCacheMs: 0,
    approvalPollMs: 10,
    poolOptions: { workers: 1 },
  });
  const approver = createScriptedApprover(engine.approvals, ({ capability }) => {
    approvalsAsked.push(capability);
    return answers.shift() ?? "deny";
  });
  ports.events.subscribe(approver.onEvent);
}, 120_000);

afterAll(async () => {
  await engine?.close();
  await python?.close();
  await weatherApi?.close();
  await db?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

async function run(code: string, session = testSession()) {
  const { envelope } = await engine.run({ code, session });
  return envelope;
}

describe("[PYTHON] the plan's examples validate", { timeout: 180_000 }, () => {
  it("weather (§2.3): bare @tool is accepted, the category stays pending with a warning that says how", async () => {
    const validation = await validateToolsetFiles(readToolsetFolder(path.join(FIXTURES, "weather")), {
      parsePython: python.parse,
    });
    expect(validation.ok).toBe(true);
    expect(validation.parsed?.bindings.map((b) => [b.name, b.category, b.categoryPending])).toEqual([
      ["get_weather", "execute", true],
      ["get_forecast", "execute", true],
    ]);
    const [weather] = validation.parsed?.bindings ?? [];
    expect(weather).toMatchObject({
      description: "Get current weather for a location.",
      params: ["location", "units"],
      signature: 'get_weather(location: str, units: str = "metric")',
      inputSchema: {
        type: "object",
        properties: { location: { type: "string" }, units: { type: "string", default: "metric" } },
        required: ["location"],
      },
    });
    const pending = validation.warnings.filter((w) => w.message.includes("no category"));
    expect(pending).toHaveLength(2);
    expect(pending[0]).toMatchObject({ file: "toolset.py", line: 3 });
    expect(pending[0]?.hint).toContain('@tool(category="read")');
  });

  it("calculator (§9): float parameters become numbers, the default is kept", async () => {
    const validation = await validateToolsetFiles(readToolsetFolder(path.join(FIXTURES, "calculator")), {
      parsePython: python.parse,
    });
    expect(validation.ok).toBe(true);
    expect(validation.parsed?.bindings[0]?.inputSchema).toEqual({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" }, op: { type: "string", default: "add" } },
      required: ["a", "b"],
      additionalProperties: false,
    });
  });

  it("a folder holding both toolset.ts and toolset.py is an error", async () => {
    const both = path.join(dir, "both");
    cpSync(path.join(FIXTURES, "calculator"), both, { recursive: true });
    writeFileSync(path.join(both, "toolset.ts"), "export {};\n");
    const validation = await validateToolsetFiles(readToolsetFolder(both), { parsePython: python.parse });
    expect(validation.ok).toBe(false);
    expect(validation.errors[0]?.message).toContain("toolset.ts or toolset.py, not both");
  });
});

describe("[PYTHON] calls through the gate", { timeout: 180_000 }, () => {
  it("an action imports the calculator and calls compute (pending category asks; approved once)", async () => {
    answers = ["once"];
    const envelope = await run(`
      import { compute } from "toolstore/calculator";
      export default async function () {
        return await compute({ a: 6, b: 7, op: "multiply" });
      }`);
    expect(envelope).toMatchObject({
      ok: true,
      result: { result: 42 },
      calls: [{ capability: "calculator.compute", category: "execute", decision: "allow" }],
    });
    expect(approvalsAsked).toContain("calculator.compute");
  });

  it("store.execute leaves out `function` for the one-binding calculator; defaults apply", async () => {
    const envelope = await run(
      `
      import { execute } from "toolstore/store";
      export default async function () {
        return await execute({ tool_name: "calculator", arguments: { a: 2, b: 3 } });
      }`,
      testSession({ mode: "auto" }),
    );
    expect(envelope).toMatchObject({ ok: true, result: { result: 5 } });
  });

  it("the weather toolset (§2.3) calls the API through httpx and its configured host", async () => {
    seen.length = 0;
    const envelope = await run(
      `
      import { execute } from "toolstore/store";
      import { get_forecast } from "toolstore/weather";
      export default async function () {
        const now = await execute({ tool_name: "weather", arguments: { function: "get_weather", location: "London", units: "metric" } });
        const later = await get_forecast({ location: "Oslo", days: 2 });
        return { now, later };
      }`,
      testSession({ mode: "auto" }),
    );
    expect(envelope).toMatchObject({
      ok: true,
      result: {
        now: { name: "London", units: "metric", main: { temp: 12.5 } },
        later: { name: "Oslo", cnt: "16" },
      },
    });
    expect(seen.map((s) => [s.host, s.path])).toEqual([
      ["api.openweathermap.org", "/data/2.5/weather"],
      ["api.openweathermap.org", "/data/2.5/forecast"],
    ]);
    expect(seen[0]?.query).toMatchObject({ q: "London", units: "metric", appid: "..." });
  });

  it("raise_for_status turns a 404 into a binding error the action sees", async () => {
    const envelope = await run(
      `
      import { get_weather } from "toolstore/weather";
      export default async function () {
        try { await get_weather({ location: "Nowhere" }); return "no error"; }
        catch (e) { return { error: e.error, message: e.message }; }
      }`,
      testSession({ mode: "auto" }),
    );
    expect(envelope).toMatchObject({ ok: true });
    const result = (envelope as unknown as { result: { error: string; message: string } }).result;
    expect(result.error).toBe("capability_failed");
    expect(result.message).toContain("HTTPStatusError");
    expect(result.message).toContain("404");
  });

  it("a host the toolset does not declare is refused, with how to add it", async () => {
    await updateToolsetSettings(db, "weather_api", { allowedHosts: [] });
    const envelope = await run(
      `
      import { get_weather } from "toolstore/weather_api";
      export default async function () {
        try { return await get_weather({ location: "London" }); }
        catch (e) { return { message: e.message }; }
      }`,
      testSession({ mode: "auto" }),
    );
    const result = (envelope as unknown as { result: { message: string } }).result;
    expect(result.message).toContain("api.weather.com is not among this toolset's allowed hosts");
    await updateToolsetSettings(db, "weather_api", { allowedHosts: ["api.weather.com"] });
    const again = await run(
      `
      import { get_weather } from "toolstore/weather_api";
      export default async function () { return await get_weather({ location: "London" }); }`,
      testSession({ mode: "auto" }),
    );
    expect(again).toMatchObject({ ok: true, result: { name: "London", units: "metric" } });
  });

  it("os.environ holds the toolset's variables", async () => {
    const envDir = path.join(dir, "envcheck");
    cpSync(path.join(FIXTURES, "calculator"), envDir, { recursive: true });
    writeFileSync(
      path.join(envDir, "toolset.py"),
      `"""Reads its environment.\n\n@env REGION where it runs\n"""\nimport os\nfrom toolstore.toolset import tool\n\n@tool(category="read")\ndef compute() -> dict:\n    """Basic arithmetic."""\n    return {"region": os.environ.get("REGION"), "keys": sorted(os.environ)}\n`,
    );
    await publishToolset(db, { dir: envDir, origin: "cli", parsePython: python.parse });
    await setToolsetEnvVar(db, { toolset: "envcheck", name: "REGION", value: "eu-north" });
    const envelope = await run(`
      import { compute } from "toolstore/envcheck";
      export default async function () { return await compute({}); }`);
    expect(envelope).toMatchObject({
      ok: true,
      result: { region: "eu-north", keys: ["REGION"] },
      calls: [{ capability: "envcheck.compute", category: "read", decision: "allow" }],
    });
  });

  it("two toolsets never share an interpreter", () => {
    const domains = python.stats().domains;
    const toolsets = domains.filter((d) => d.includes("@")).map((d) => d.split("@")[0]);
    expect(new Set(toolsets).size).toBe(toolsets.length);
  });
});

describe("[PYTHON] the plan's legacy definitions migrate and run", { timeout: 180_000 }, () => {
  it("migrate-api (the plan's parameter map, --python) and migrate-docker (verbatim) run through the gate", async () => {
    const { migrateLegacyApi } = await import("../../core/toolsets");
    const { migrateLegacyDocker } = await import("../../core/python/migrate-docker");
    const { readFileSync, mkdirSync } = await import("node:fs");
    const legacy = (f: string) => JSON.parse(readFileSync(path.join(FIXTURES, "legacy", f), "utf8"));

    const api = migrateLegacyApi(legacy("weather-api.json"), {
      name: "weather_migrated",
      language: "python",
    });
    const docker = await migrateLegacyDocker(legacy("calculator-docker.json"), {
      parsePython: python.parse,
      name: "calculator_docker",
    });
    expect(docker.validation.ok).toBe(true);
    expect(docker.todo[0]).toContain("set a category");
    for (const [name, files] of [
      ["weather_migrated", api.files],
      ["calculator_docker", docker.files],
    ] as const) {
      const folder = path.join(root, name);
      mkdirSync(folder, { recursive: true });
      writeFileSync(path.join(folder, "toolset.py"), files.source);
      writeFileSync(path.join(folder, "doc.md"), files.doc);
      const published = await publishToolset(db, { dir: folder, origin: "cli", parsePython: python.parse });
      expect(published.status).toBe("created");
    }
    seen.length = 0;
    const envelope = await run(
      `
      import { weather_api } from "toolstore/weather_migrated";
      import { execute } from "toolstore/store";
      export default async function () {
        const w = await weather_api({ location: "London" });
        const c = await execute({ tool_name: "calculator_docker", arguments: { a: 1, b: 2, op: "add" } });
        return { w, c };
      }`,
      testSession({ mode: "auto" }),
    );
    if (!envelope.ok) throw new Error(JSON.stringify(envelope));
    expect(envelope).toMatchObject({ ok: true, result: { w: { name: "London", units: "metric" }, c: null } });
    expect(seen[0]).toMatchObject({
      host: "api.weather.com",
      path: "/data",
      query: { location: "London", units: "metric" },
    });
  });

  it("migrate-docker decodes base64 code; the named function is the one binding, its signature the schema", async () => {
    const { migrateLegacyDocker } = await import("../../core/python/migrate-docker");
    const code =
      'def helper(x):\n    return x * 2\n\ndef main(n: int, label: str = "n"):\n    """Doubles n."""\n    return {label: helper(n)}\n';
    const migrated = await migrateLegacyDocker(
      { name: "Doubler", type: "docker", code: Buffer.from(code).toString("base64"), function: "main" },
      { parsePython: python.parse, category: "read" },
    );
    expect(migrated.decoded).toBe(true);
    expect(migrated.validation.ok).toBe(true);
    expect(migrated.validation.parsed?.bindings.map((b) => [b.name, b.category, b.signature])).toEqual([
      ["main", "read", 'main(n: int, label: str = "n")'],
    ]);
    expect(migrated.files.doc).toContain("## `main` (read)");
    const result = await python.runBinding({
      trustDomain: "doubler@test",
      code: migrated.files.source,
      exportName: "main",
      args: [],
      kwargs: { n: 21 },
      env: {},
      allowedHosts: [],
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({ ok: true, value: { n: 42 } });
  });
});

describe("[PYTHON] the console names the real code file", { timeout: 180_000 }, () => {
  it("list, detail, versions and diffs read the stored language, not a guess from the code", async () => {
    // A TypeScript toolset whose code holds a line that reads like Python's import of the
    // decorator: guessing from the text would call it Python.
    const ts = path.join(root, "snippets");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(ts, { recursive: true });
    writeFileSync(path.join(ts, "doc.md"), "# snippets\n\nPython snippets as text.\n");
    writeFileSync(
      path.join(ts, "toolset.ts"),
      [
        "/** Python snippets as text. */",
        "const HEADER = `",
        "from toolstore.toolset import tool",
        "`;",
        "/** The import line of a Python toolset. @tool read */",
        "export function header(): string {",
        "  return HEADER.trim();",
        "}",
        "",
      ].join("\n"),
    );
    expect((await publishToolset(db, { dir: ts, origin: "cli", parsePython: python.parse })).status).toBe(
      "created",
    );
    const { listToolsets, getToolset, diffStoredVersions } = await import("./index");
    const languages = Object.fromEntries((await listToolsets(db)).map((t) => [t.name, t.language]));
    expect(languages).toMatchObject({ calculator: "python", weather: "python", snippets: "typescript" });
    expect((await getToolset(db, "snippets")).language).toBe("typescript");

    // A code-only change of a Python toolset: the version and its diff name toolset.py.
    const calc = path.join(root, "calculator");
    const { readFileSync } = await import("node:fs");
    writeFileSync(
      path.join(calc, "toolset.py"),
      `${readFileSync(path.join(calc, "toolset.py"), "utf8")}\n# v2\n`,
    );
    expect((await publishToolset(db, { dir: calc, origin: "cli", parsePython: python.parse })).status).toBe(
      "updated",
    );
    const detail = await getToolset(db, "calculator");
    expect(detail.language).toBe("python");
    expect(detail.versions.map((v) => [v.version, v.language])).toEqual([
      [2, "python"],
      [1, "python"],
    ]);
    const diff = await diffStoredVersions(db, "calculator", 1, 2);
    expect(diff.lines).toContain("~ toolset.py changed (same bindings and signatures)");
  });
});
