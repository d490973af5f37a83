/**
 * Toolsets through the whole engine: published from the shipped folder into a real database,
 * imported by actions running in the sandbox pool, gated, and called through store.execute.
 */

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../core/actions/engine";
import { builtinModules } from "../../core/capabilities/builtins";
import { createScriptedApprover, testSession } from "../../core/testing/fixtures";
import { createMemoryPorts, type MemoryPorts } from "../../core/testing/memory-ports";
import { createDb, type Db } from "../../db";
import { deployMigrations } from "../../db/migrate";
import { createCapabilityCategoryLookup } from "../../services/capability-categories";
import { type LocalServer, sendJson, startLocalServer } from "../../toolset-examples/local-server";
import {
  createToolsetModuleSource,
  publishToolset,
  setToolsetEnvVar,
  syncToolsetsFolder,
  updateToolsetSettings,
} from "./index";

const TOOLSETS = path.resolve(import.meta.dirname, "../../../toolsets");
const dir = mkdtempSync(path.join(tmpdir(), "toolstore-engine-"));
const root = path.join(dir, "toolsets");
const SECRET = "whk-super-secret-1234";
let db: Db;
let engine: Engine;
let ports: MemoryPorts;
let receiver: LocalServer;
let answers: ("once" | "session" | "deny")[] = [];
const approvalsAsked: string[] = [];

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "e.db") };
  await deployMigrations(target);
  db = createDb(target);
  cpSync(TOOLSETS, root, { recursive: true });
  const sync = await syncToolsetsFolder(db, root);
  expect(sync.failed).toEqual([]);

  receiver = await startLocalServer((req, res) =>
    sendJson(res, 200, { got: JSON.parse(req.body || "null"), auth: req.headers.authorization ?? null }),
  );
  await setToolsetEnvVar(db, { toolset: "webhook", name: "WEBHOOK_URL", value: `${receiver.baseUrl}/hook` });
  await setToolsetEnvVar(db, { toolset: "webhook", name: "WEBHOOK_TOKEN", value: SECRET });
  await updateToolsetSettings(db, "webhook", { allowedHosts: ["127.0.0.1"] });

  ports = createMemoryPorts();
  engine = createEngine({
    ports,
    instanceId: "toolsets-test",
    modules: [builtinModules()],
    sources: [createToolsetModuleSource({ db, runtimes: () => ({ typescript: engine.pool }) })],
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
});

afterAll(async () => {
  await engine?.close();
  await receiver?.close();
  await db?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

async function run(code: string, session = testSession()) {
  const { envelope } = await engine.run({ code, session });
  return envelope;
}

describe("[TOOLSETS] calls through the gate", () => {
  it("an action imports an example toolset and calls a binding", async () => {
    const envelope = await run(`
      import { evaluate } from "toolstore/calculator";
      export default async function () {
        return await evaluate({ expression: "6 * 7", precision: 0 });
      }`);
    expect(envelope).toMatchObject({
      ok: true,
      result: { expression: "6 * 7", value: 42 },
      calls: [{ capability: "calculator.evaluate", category: "read", decision: "allow" }],
    });
  });

  it("store.execute gives the same result, and may leave out `function` for a one-binding toolset", async () => {
    const envelope = await run(
      `
      import { execute, info } from "toolstore/store";
      export default async function () {
        const a = await execute({ tool_name: "calculator", arguments: { function: "evaluate", expression: "6 * 7", precision: 0 } });
        const b = await execute({ tool_name: "lisp", arguments: { program: "(* 6 7)" } });
        const doc = await info({ tool_name: "lisp" });
        return { a, b: b.value, docStartsWith: doc.doc.slice(0, 6) };
      }`,
      testSession({ mode: "auto" }),
    );
    expect(envelope).toMatchObject({
      ok: true,
      result: { a: { expression: "6 * 7", value: 42 }, b: 42, docStartsWith: "# lisp" },
    });
    expect(envelope.calls.map((c) => c.capability)).toEqual([
      "store.execute",
      "calculator.evaluate",
      "store.execute",
      "lisp.run",
      "store.info",
    ]);
  });

  it("a chart image can be saved as an asset and shows up in the envelope's images", async () => {
    const envelope = await run(
      `
      import { bar_chart } from "toolstore/chart";
      import { save } from "toolstore/assets";
      export default async function () {
        const chart = await bar_chart({ labels: ["a", "b"], values: [1, 2], width: 200, height: 150 });
        const asset = await save({ data_base64: chart.data_base64, name: "ab" });
        return { asset, alt: chart.alt };
      }`,
      testSession({ mode: "auto" }),
    );
    expect(envelope.ok).toBe(true);
    expect(envelope.images).toEqual([
      { asset_id: expect.any(String), mime: "image/png", width: 200, height: 150 },
    ]);
  });

  it("a secret reaches the toolset but never appears in the envelope or logs", async () => {
    const envelope = await run(
      `
      import { send } from "toolstore/webhook";
      export default async function () {
        const r = await send({ event: "test.secret", data: { n: 1 } });
        console.log("receiver said", JSON.stringify(r));
        return r;
      }`,
      testSession({ mode: "auto" }),
    );
    expect(envelope.ok).toBe(true);
    expect(receiver.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
    const text = JSON.stringify(envelope);
    expect(text).not.toContain(SECRET);
    expect(text).toContain("Bearer ***");
    expect(envelope.logs.length).toBeGreaterThan(0);
  });
});

describe("[TOOLSETS] grants are bound to the version hash", () => {
  const session = testSession({ id: "sess_grants", mode: "default" });
  const call = `
    import { send } from "toolstore/webhook";
    export default async function () { return (await send({ event: "grant.check" })).delivered; }`;

  it("an 'allow for session' grant stops applying when the code changes", async () => {
    approvalsAsked.length = 0;
    answers = ["session"];
    expect(await run(call, session)).toMatchObject({
      ok: true,
      result: true,
      calls: [{ decision: "allow" }],
    });
    expect(approvalsAsked).toEqual(["webhook.send"]);

    // Same version: the grant applies, nobody is asked.
    expect(await run(call, session)).toMatchObject({ ok: true, result: true });
    expect(approvalsAsked).toHaveLength(1);

    // Republish with a changed signature: a new hash, so the old grant no longer applies.
    const source = path.join(root, "webhook", "toolset.ts");
    writeFileSync(
      source,
      readFileSync(source, "utf8").replace(
        "export async function send(event: string, data: unknown = null)",
        "export async function send(event: string, data: unknown = null, dry_run = false)",
      ),
    );
    const published = await publishToolset(db, { dir: path.join(root, "webhook"), origin: "cli" });
    expect(published.changes[0]).toContain("~ send signature:");
    answers = ["deny"];
    const afterChange = await run(call, session);
    expect(approvalsAsked).toEqual(["webhook.send", "webhook.send"]);
    expect(afterChange.ok).toBe(false);
    expect(afterChange.calls).toEqual([
      expect.objectContaining({ capability: "webhook.send", decision: "deny" }),
    ]);
  });
});
