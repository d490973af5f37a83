import { describe, expect, it } from "vitest";
import { parseToolsetSource } from "./parse-toolset";

function parse(source: string) {
  return parseToolsetSource(source);
}

function only(source: string) {
  const parsed = parse(source);
  expect(parsed.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  expect(parsed.bindings).toHaveLength(1);
  return parsed.bindings[0] as NonNullable<(typeof parsed.bindings)[0]>;
}

const tool = (signature: string, category = "read") =>
  `/** Does it.\n * @tool ${category} */\nexport function f(${signature}) { return 1; }\n`;

describe("[TOOLSETS] parse: marking and metadata", () => {
  it("turns a marked, exported function into a binding: name, description, category, params", () => {
    const b = only(`
/**
 * Get the weather for a city.
 * Second line of the description.
 * @tool read
 * @param location City name, e.g. "Oslo"
 * @param unit - Temperature unit
 */
export async function get_weather(location: string, unit: "c" | "f" = "c") { return { location, unit }; }

function helper() { return 1; }
`);
    expect(b).toMatchObject({
      name: "get_weather",
      description: "Get the weather for a city.\nSecond line of the description.",
      category: "read",
      params: ["location", "unit"],
      async: true,
      line: 9,
      signature: 'get_weather({ location: string, unit?: "c" | "f" = "c" })',
    });
    expect(b.inputSchema).toEqual({
      type: "object",
      properties: {
        location: { type: "string", description: 'City name, e.g. "Oslo"' },
        unit: { type: "string", enum: ["c", "f"], description: "Temperature unit", default: "c" },
      },
      required: ["location"],
      additionalProperties: false,
    });
  });

  it("ignores unmarked functions and warns when an unmarked one is exported", () => {
    const parsed = parse(
      `${tool("x: string")}\nexport function exported_helper() { return 2; }\nfunction inner() { return 3; }\n`,
    );
    expect(parsed.bindings.map((b) => b.name)).toEqual(["f"]);
    expect(parsed.diagnostics).toEqual([
      expect.objectContaining({
        severity: "warning",
        line: 5,
        message: expect.stringContaining("`exported_helper` is not marked with @tool"),
      }),
    ]);
  });

  it("reads the header: hosts, timeout, env and secret declarations and the description", () => {
    const parsed = parse(`/**
 * Talks to the example API.
 * @hosts api.example.com, *.cdn.example.com localhost:8080
 * @timeout 5000
 * @env BASE_URL Where the API lives
 * @secret API_KEY - Bearer token
 */
${tool("x: string")}`);
    expect(parsed.declarations).toEqual({
      description: "Talks to the example API.",
      hosts: ["api.example.com", "*.cdn.example.com", "localhost:8080"],
      timeoutMs: 5000,
      env: [
        { name: "BASE_URL", secret: false, description: "Where the API lives" },
        { name: "API_KEY", secret: true, description: "Bearer token" },
      ],
    });
    expect(parsed.bindings[0]?.description).toBe("Does it.");
  });
});

describe("[TOOLSETS] parse: types to JSON Schema", () => {
  const schemaOf = (signature: string, prelude = "") => only(`${prelude}\n${tool(signature)}`).inputSchema;

  it("maps primitives, literal unions, nullable and unknown", () => {
    expect(
      schemaOf("s: string, n: number, b: boolean, u: unknown, nn: number | null, lit: 1 | 2 | 3, t: true")
        .properties,
    ).toEqual({
      s: { type: "string" },
      n: { type: "number" },
      b: { type: "boolean" },
      u: {},
      nn: { type: ["number", "null"] },
      lit: { type: "number", enum: [1, 2, 3] },
      t: { type: "boolean", enum: [true] },
    });
  });

  it("maps arrays (both spellings), readonly arrays and Record", () => {
    expect(
      schemaOf("a: string[], b: Array<number>, c: readonly boolean[], d: Record<string, number>").properties,
    ).toEqual({
      a: { type: "array", items: { type: "string" } },
      b: { type: "array", items: { type: "number" } },
      c: { type: "array", items: { type: "boolean" } },
      d: { type: "object", additionalProperties: { type: "number" } },
    });
  });

  it("maps nested object literals, interfaces (with extends and property docs) and aliases", () => {
    const prelude = `
interface Base { id: string }
/** A point on the map. */
interface Point extends Base {
  /** Degrees north. */
  lat: number;
  lon: number;
  label?: string;
}
type Unit = "km" | "mi";`;
    const schema = schemaOf(
      "from: Point, to: { lat: number; lon: number }, unit: Unit, stops: Point[] = []",
      prelude,
    );
    expect(schema.properties).toEqual({
      from: {
        type: "object",
        description: "A point on the map.",
        properties: {
          id: { type: "string" },
          lat: { type: "number", description: "Degrees north." },
          lon: { type: "number" },
          label: { type: "string" },
        },
        required: ["id", "lat", "lon"],
        additionalProperties: false,
      },
      to: {
        type: "object",
        properties: { lat: { type: "number" }, lon: { type: "number" } },
        required: ["lat", "lon"],
        additionalProperties: false,
      },
      unit: { type: "string", enum: ["km", "mi"] },
      stops: expect.objectContaining({ type: "array", default: [] }),
    });
    expect(schema.required).toEqual(["from", "to", "unit"]);
  });

  it("treats `?`, defaults and `| undefined` as optional; records literal defaults only", () => {
    const schema = schemaOf("a?: string, b = 3, c: string | undefined, d: number = Date.now(), e = -1.5");
    expect(schema.required).toBeUndefined();
    expect(schema.properties).toEqual({
      a: { type: "string" },
      b: { type: "number", default: 3 },
      c: { type: "string" },
      d: { type: "number" },
      e: { type: "number", default: -1.5 },
    });
  });

  it("keeps a parameter-less binding callable with an empty object", () => {
    expect(schemaOf("")).toEqual({ type: "object", properties: {}, additionalProperties: false });
  });
});

describe("[TOOLSETS] parse: errors name toolset.ts:LINE and what to write instead", () => {
  const errors = (source: string) => parse(source).diagnostics.filter((d) => d.severity === "error");

  it.each([
    ["d: Date", "has type `Date`, which JSON cannot carry", "ISO 8601"],
    ["a: any", "has type `any`", "`unknown`"],
    ["o: object", "has type `object`", "Record<string, unknown>"],
    ["m: Map<string, number>", "has type `Map`", "Record<string, T>"],
    ["f: () => void", "is a function type", "data"],
    ["x: Missing", "has type `Missing`, which is not declared in toolset.ts", "interface Missing"],
    ["t: [string, number]", "is a tuple", "object type with named fields"],
    ["...rest: string[]", "is a rest parameter", "rest: string[]"],
    ["{ a }: { a: string }", "is destructured", "name each parameter"],
    ["x", "parameter `x` of `f` has no type", "x: string"],
    ["b: bigint", "has type `bigint`", "number"],
  ])("`%s`", (signature, message, hint) => {
    const found = errors(`\n\n${tool(signature)}`);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      file: "toolset.ts",
      line: 5,
      message: expect.stringContaining(message),
      hint: expect.stringContaining(hint),
    });
  });

  it("refuses recursive types and enums", () => {
    // Reported where the type refers to itself.
    expect(errors(`interface Node { children: Node[] }\n${tool("n: Node")}`)[0]).toMatchObject({
      line: 1,
      message: expect.stringContaining("recursively (Node -> Node)"),
    });
    expect(errors(`enum Unit { C = "c" }\n${tool("u: Unit")}`)[0]).toMatchObject({
      hint: expect.stringContaining("union of string literals"),
    });
  });

  it("requires a known category, a description, export, and no overloads", () => {
    expect(errors("/** Does it.\n * @tool */\nexport function f() {}")[0]).toMatchObject({
      line: 2,
      message: "@tool on `f` has no category",
      hint: expect.stringContaining("`@tool read`"),
    });
    expect(errors("/** Does it.\n * @tool reed */\nexport function f() {}")[0]).toMatchObject({
      message: "@tool on `f` has unknown category `reed`",
    });
    expect(errors("/** @tool read */\nexport function f() {}")[0]).toMatchObject({
      line: 2,
      message: "@tool function `f` has no description",
    });
    expect(errors("/** Does it.\n * @tool read */\nfunction f() {}")[0]).toMatchObject({
      message: "@tool function `f` is not exported",
    });
    expect(errors("/** Does it.\n * @tool read */\nexport const f = () => 1;")[0]).toMatchObject({
      message: expect.stringContaining("@tool marks a function declaration"),
    });
  });

  it("refuses imports, header tags out of place, bad hosts and timeouts, reserved names", () => {
    expect(errors(`import { x } from "./other";\n${tool("a: string")}`)[0]).toMatchObject({
      line: 1,
      message: "a toolset is one self-contained file; imports are not available",
    });
    expect(errors(`${tool("a: string")}\n/** @hosts api.example.com */\nconst x = 1;`)[0]).toMatchObject({
      line: 5,
      message: "@hosts belongs in the comment at the top of toolset.ts",
    });
    const header = errors(
      `/**\n * @hosts https://api.example.com/v1\n * @timeout 5s\n * @env base_url\n */\n${tool("a: string")}`,
    );
    expect(header.map((d) => [d.line, d.message])).toEqual([
      [2, "@hosts takes host names, not URLs: `https://api.example.com/v1`"],
      [3, "@timeout must be whole milliseconds between 100 and 300000, got `5s`"],
      [4, "@env needs an upper-case variable name, got `base_url`"],
    ]);
    expect(errors(`const __toolstore_x = 1;\n${tool("a: string")}`)[0]).toMatchObject({
      message: expect.stringContaining("reserved"),
    });
  });
});
