import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../actions/engine";
import { createCanaryModule, testSession } from "../../testing/fixtures";
import { createMemoryPorts } from "../../testing/memory-ports";
import { makePng } from "../../testing/png";
import { builtinModules } from ".";
import { readPngHeader } from "./assets";
import { createBuiltinModules } from "./index";

describe("built-in categories", () => {
  it("match the reviewed snapshot (a reclassification must show up as a diff of builtin-categories.json)", () => {
    const ports = createMemoryPorts();
    const modules = createBuiltinModules({
      catalog: { list: async () => [], search: async () => [], info: async () => null },
      assets: ports.assets,
      http: { allowedHosts: [] },
    });
    const actual = Object.fromEntries(
      modules
        .flatMap((m) => m.exports.map((e) => [e.spec.name, e.spec.category] as const))
        .sort(([a], [b]) => a.localeCompare(b)),
    );
    const snapshot = JSON.parse(readFileSync(new URL("./builtin-categories.json", import.meta.url), "utf8"));
    expect(actual).toEqual(snapshot);
  });
});

describe("toolstore/assets", () => {
  let engine: Engine;
  let ports: ReturnType<typeof createMemoryPorts>;
  beforeAll(() => {
    ports = createMemoryPorts();
    engine = createEngine({ ports, instanceId: "t", modules: [builtinModules()] });
  });
  afterAll(() => engine.close());
  const session = testSession({ mode: "auto" });

  it("reads width and height from the PNG header", () => {
    expect(readPngHeader(makePng(7, 3))).toEqual({ width: 7, height: 3 });
  });

  it("saves a PNG and returns a handle, and the run lists it as an image", async () => {
    const data = makePng(4, 2).toString("base64");
    const { value, run } = await engine.invoke({
      session,
      name: "assets.save",
      args: { data_base64: data, name: "dot" },
    });
    expect(value).toMatchObject({ mime: "image/png", width: 4, height: 2, name: "dot" });
    expect(run.images).toEqual([{ asset_id: expect.any(String), mime: "image/png", width: 4, height: 2 }]);
    expect(ports.assets.all).toHaveLength(1);
    const listed = await engine.invoke({ session, name: "assets.list", args: {} });
    expect(listed.value).toMatchObject({ assets: [{ asset_id: (value as { asset_id: string }).asset_id }] });
  });

  it.each([
    ["not base64", "%%%"],
    ["not a PNG", Buffer.from("GIF89a........................................").toString("base64")],
    ["a truncated PNG", makePng(2, 2).subarray(0, 40).toString("base64")],
  ])("refuses %s", async (_what, data) => {
    await expect(
      engine.invoke({ session, name: "assets.save", args: { data_base64: data } }),
    ).rejects.toMatchObject({
      code: "BAD_INPUT",
    });
  });
});

describe("toolstore/http", () => {
  let server: Server;
  let base: string;
  let engine: Engine | undefined;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/redirect") {
        res.writeHead(302, { location: "http://forbidden.invalid/x" }).end();
        return;
      }
      res.writeHead(200, { "content-type": "text/plain" }).end(`hello ${req.method} ${req.url}`);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  afterEach(async () => engine?.close());

  const session = testSession({ mode: "auto" });

  it("fetches from an allowed host", async () => {
    engine = createEngine({
      ports: createMemoryPorts(),
      instanceId: "t",
      modules: [builtinModules({ http: { allowedHosts: ["127.0.0.1"] } })],
    });
    const { value } = await engine.invoke({ session, name: "http.fetch", args: { url: `${base}/a` } });
    expect(value).toMatchObject({ status: 200, ok: true, body: "hello GET /a" });
  });

  it("refuses a host outside the allowlist, also on a redirect", async () => {
    engine = createEngine({
      ports: createMemoryPorts(),
      instanceId: "t",
      modules: [builtinModules({ http: { allowedHosts: ["localhost"] } })],
    });
    await expect(
      engine.invoke({ session, name: "http.fetch", args: { url: `${base}/a` } }),
    ).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await engine.close();
    engine = createEngine({
      ports: createMemoryPorts(),
      instanceId: "t",
      modules: [builtinModules({ http: { allowedHosts: ["127.0.0.1"] } })],
    });
    await expect(
      engine.invoke({ session, name: "http.fetch", args: { url: `${base}/redirect` } }),
    ).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });

  it("is external: it asks in default mode", async () => {
    const ports = createMemoryPorts();
    engine = createEngine({
      ports,
      instanceId: "t",
      modules: [builtinModules({ http: { allowedHosts: ["127.0.0.1"] } })],
      approvalTtlMs: 30,
    });
    await expect(
      engine.invoke({ session: testSession(), name: "http.fetch", args: { url: `${base}/a` } }),
    ).rejects.toMatchObject({ code: "GATE_DENIED" });
    expect(ports.approvals.all.size).toBe(1);
  });
});

describe("toolstore/store", () => {
  let engine: Engine;
  beforeAll(() => {
    const canary = createCanaryModule();
    engine = createEngine({
      ports: createMemoryPorts(),
      instanceId: "t",
      modules: [
        builtinModules(),
        () => [{ ...canary, doc: "# Canary\nFull documentation of the canary toolset." }],
      ],
    });
  });
  afterAll(() => engine.close());
  const session = testSession({ mode: "auto" });

  it("lists mounted modules with their functions", async () => {
    const { value } = await engine.invoke({
      session: testSession({ mountedModules: ["store", "canary"] }),
      name: "store.list",
      args: {},
    });
    const tools = (value as { tools: { name: string; functions: { name: string }[] }[] }).tools;
    expect(tools.map((t) => t.name)).toEqual(["store", "canary"]);
    expect(tools[1]?.functions.map((f) => f.name)).toEqual(["read", "write", "execute", "external"]);
  });

  it("searches by words", async () => {
    const { value } = await engine.invoke({ session, name: "store.search", args: { query: "canary" } });
    expect((value as { tools: { name: string }[] }).tools[0]?.name).toBe("canary");
  });

  it("info returns the definition with the full doc", async () => {
    const { value } = await engine.invoke({ session, name: "store.info", args: { tool_name: "canary" } });
    expect(value).toMatchObject({ name: "canary", doc: expect.stringContaining("Full documentation") });
    await expect(
      engine.invoke({ session, name: "store.info", args: { tool_name: "canry" } }),
    ).rejects.toThrow(/did you mean "canary"/);
  });

  it("execute names the function, and refuses an ambiguous call", async () => {
    const { value } = await engine.invoke({
      session,
      name: "store.execute",
      args: { tool_name: "canary", arguments: { function: "write", value: "x" } },
    });
    expect(value).toEqual({ category: "write", echo: { value: "x" } });
    await expect(
      engine.invoke({
        session,
        name: "store.execute",
        args: { tool_name: "canary", arguments: { value: "x" } },
      }),
    ).rejects.toThrow(/name one in arguments.function/);
  });
});
