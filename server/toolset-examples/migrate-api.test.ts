import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CompiledToolset, compileToolset, migrateLegacyApi } from "../core/toolsets";
import { closeTestPool, runBinding } from "./helpers";
import { type LocalServer, sendJson, startLocalServer } from "./local-server";

let api: LocalServer;

beforeAll(async () => {
  api = await startLocalServer((req, res) => {
    if (req.url.pathname === "/v1/weather/Oslo") {
      return sendJson(res, 200, {
        city: "Oslo",
        query: Object.fromEntries(req.url.searchParams),
        auth: req.headers.authorization ?? null,
      });
    }
    if (req.url.pathname === "/tickets" && req.method === "POST") {
      return sendJson(res, 201, {
        id: 7,
        received: JSON.parse(req.body),
        contentType: req.headers["content-type"],
      });
    }
    sendJson(res, 404, { error: "no such thing" });
  });
});

afterAll(async () => {
  await api.close();
  await closeTestPool();
});

function compileMigrated(definition: unknown): CompiledToolset {
  const migrated = migrateLegacyApi(definition);
  return compileToolset({ name: migrated.name, files: migrated.files });
}

describe("[TOOLSETS] migrate-api output runs against a local HTTP server", () => {
  it("GET: path placeholder, query string (arrays repeat), renamed parameter, bearer secret", async () => {
    const toolset = compileMigrated({
      name: "get_weather",
      type: "api",
      endpoint: "https://api.example.com/v1/weather/{city}?format=json",
      method: "GET",
      parameters: {
        type: "object",
        properties: {
          city: { type: "string" },
          units: { type: "string", enum: ["metric", "imperial"], default: "metric" },
          "include-hourly": { type: "boolean" },
          tags: { type: "array", items: { type: "string" } },
        },
        required: ["city"],
      },
    });
    const result = await runBinding(
      toolset,
      "get_weather",
      { city: "Oslo", include_hourly: true, tags: ["a", "b"] },
      { env: { BASE_URL: api.baseUrl, API_KEY: "k-123456" }, allowedHosts: ["127.0.0.1"] },
    );
    expect(result).toMatchObject({
      ok: true,
      value: {
        city: "Oslo",
        query: { format: "json", units: "metric", "include-hourly": "true", tags: "b" },
        auth: "Bearer k-123456",
      },
    });
    expect(api.requests.at(-1)?.url.search).toBe(
      "?format=json&units=metric&include-hourly=true&tags=a&tags=b",
    );
  });

  it("POST: JSON body, and a non-2xx answer raises with the status", async () => {
    const toolset = compileMigrated({
      name: "create_ticket",
      type: "api",
      endpoint: "http://tickets.internal:9000/tickets",
      method: "POST",
      parameters: [
        { name: "title", type: "string", required: true },
        { name: "priority", type: "integer" },
      ],
    });
    const options = { env: { BASE_URL: api.baseUrl }, allowedHosts: ["127.0.0.1"] };
    expect(
      await runBinding(toolset, "create_ticket", { title: "Printer on fire", priority: 1 }, options),
    ).toMatchObject({
      ok: true,
      value: { id: 7, received: { title: "Printer on fire", priority: 1 }, contentType: "application/json" },
    });
    expect(await runBinding(toolset, "create_ticket", { title: "x", priority: 1.5 }, options)).toMatchObject({
      ok: false,
      error: "priority must be a whole number",
    });
    const missing = compileMigrated({
      name: "nothing",
      type: "api",
      endpoint: "http://x.internal/missing",
      method: "DELETE",
    });
    expect(await runBinding(missing, "nothing", {}, options)).toMatchObject({
      ok: false,
      error: 'DELETE /missing failed with HTTP 404: {"error":"no such thing"}',
    });
  });
});
