import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { migrateLegacyApi } from "./migrate-api";
import { validateToolset } from "./validate-toolset";

const SCHEMA_FORM = {
  name: "Get Weather",
  type: "api",
  description: "Current weather for a city.",
  endpoint: "https://api.example.com/v1/weather/{city}?format=json",
  method: "get",
  parameters: {
    type: "object",
    properties: {
      city: { type: "string", description: "City name" },
      units: { type: "string", enum: ["metric", "imperial"], default: "metric", description: "Unit system" },
      days: { type: "integer", description: "Days ahead" },
      "include-hourly": { type: "boolean" },
      tags: { type: "array", items: { type: "string" } },
    },
    required: ["city"],
  },
};

const ARRAY_FORM = {
  name: "create_ticket",
  type: "api",
  endpoint: "http://localhost:9000/tickets",
  method: "POST",
  parameters: [
    { name: "title", type: "string", description: "Short summary", required: true },
    { name: "priority", type: "number", description: "1 (high) to 5 (low)" },
    { name: "labels", type: "array", items: { type: "string" } },
    { name: "meta", type: "object", properties: { source: { type: "string" } }, required: ["source"] },
  ],
};

describe("[TOOLSETS] migrate-api", () => {
  it("turns the JSON-Schema form into a toolset that validates (with the type check)", () => {
    const migrated = migrateLegacyApi(SCHEMA_FORM);
    expect(migrated).toMatchObject({
      name: "get_weather",
      binding: "get_weather",
      category: "external",
      method: "GET",
    });
    const validation = validateToolset({ name: migrated.name, files: migrated.files });
    expect(validation.errors).toEqual([]);
    expect(validation.warnings).toEqual([]);
    const binding = validation.parsed?.bindings[0];
    expect(binding?.inputSchema).toMatchObject({
      required: ["city"],
      properties: {
        city: { type: "string", description: "City name" },
        units: { type: "string", enum: ["metric", "imperial"], default: "metric" },
        days: { type: "number" },
        include_hourly: { type: "boolean" },
        tags: { type: "array", items: { type: "string" } },
      },
    });
    expect(validation.parsed?.declarations).toMatchObject({
      hosts: ["api.example.com"],
      env: [{ name: "BASE_URL" }, { name: "API_KEY", secret: true }],
    });
    expect(migrated.notes).toContain(
      "parameter `include-hourly` is `include_hourly` in toolset.ts (sent as `include-hourly`)",
    );
    expect(migrated.files.doc).toContain(
      '| `units` | `"metric" \\| "imperial"` | no (default `"metric"`) | Unit system |',
    );
  });

  it("turns the array form into a write toolset that sends a JSON body", () => {
    const migrated = migrateLegacyApi(ARRAY_FORM);
    expect(migrated.category).toBe("write");
    const validation = validateToolset({ name: migrated.name, files: migrated.files });
    expect(validation.errors).toEqual([]);
    expect(validation.parsed?.bindings[0]?.signature).toBe(
      "create_ticket({ title: string, priority?: number, labels?: string[], meta?: { source: string } })",
    );
    expect(migrated.files.source).toContain("const SEND_AS_QUERY = false;");
    expect(migrated.files.doc).toContain("Parameters travel as a JSON body.");
  });

  it.each([
    [[], "expected a JSON object"],
    [{ ...ARRAY_FORM, type: "function" }, '`type` must be "api", got "function"'],
    [{ ...ARRAY_FORM, endpoint: "not a url" }, "`endpoint` is not an absolute URL"],
    [{ ...ARRAY_FORM, method: "FETCH" }, "`method` must be one of GET, HEAD, POST, PUT, PATCH, DELETE"],
    [{ ...ARRAY_FORM, parameters: "city" }, "`parameters` must be a JSON Schema object"],
    [
      { ...ARRAY_FORM, parameters: [{ type: "string" }] },
      "parameters[0] must be an object with a string `name`",
    ],
    [
      { ...SCHEMA_FORM, parameters: { ...SCHEMA_FORM.parameters, required: ["nope"] } },
      'parameters.required names "nope"',
    ],
    [
      { ...SCHEMA_FORM, parameters: { type: "object", properties: {} } },
      "endpoint placeholder {city} has no parameter",
    ],
  ])("refuses bad input clearly (%#)", (input, message) => {
    let thrown: unknown;
    try {
      migrateLegacyApi(input);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe("BAD_INPUT");
    expect((thrown as AppError).message).toContain(message);
  });
});
