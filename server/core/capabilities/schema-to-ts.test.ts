import ts from "typescript";
import { describe, expect, it } from "vitest";
import { renderModuleSignatures } from "../actions/contract";
import { renderModuleTypings } from "../actions/module-typings";
import { SHIPPED_MODULE_NAMES, shippedTypingsModules } from "../testing/shipped-modules";
import { argsParameter, formatSignature, schemaParams, schemaToTs } from "./schema-to-ts";

/** Parses a type expression; throws when it is not valid TypeScript. */
function parsesAsType(type: string): void {
  const file = ts.createSourceFile("t.ts", `type T = ${type};`, ts.ScriptTarget.ES2022, true);
  const diagnostics = (file as unknown as { parseDiagnostics: ts.Diagnostic[] }).parseDiagnostics;
  if (diagnostics.length > 0) throw new Error(`not a type: ${type}`);
}

describe("schemaToTs", () => {
  it.each([
    [{ type: "string" }, "string"],
    [{ type: "integer" }, "number"],
    [{ type: ["string", "null"] }, "string | null"],
    [{ enum: ["x", 1] }, '"x" | 1'],
    [{ enum: [] }, "never"],
    [{ const: "on" }, '"on"'],
    [{ anyOf: [{ type: "string" }, { type: "number" }] }, "string | number"],
    [{ oneOf: [{ type: "string" }, { type: "string" }] }, "string"],
    [
      { allOf: [{ anyOf: [{ type: "string" }, { type: "null" }] }, { type: "string" }] },
      "(string | null) & string",
    ],
    [{ type: "array", items: { type: "integer" } }, "number[]"],
    [{ type: "array", items: { anyOf: [{ type: "string" }, { type: "null" }] } }, "(string | null)[]"],
    [
      { type: "array", items: { type: "object", additionalProperties: { type: "number" } } },
      "Record<string, number>[]",
    ],
    [{ type: "array", prefixItems: [{ type: "number" }, { type: "string" }] }, "[number, string]"],
    [{ type: "array" }, "unknown[]"],
    [{ type: "object" }, "Record<string, unknown>"],
    [{ type: "object", additionalProperties: false }, "{}"],
    [{ type: "object", additionalProperties: { type: "string" } }, "Record<string, string>"],
    [
      { type: "object", properties: { a: { type: "string" }, b: { type: "number" } }, required: ["a"] },
      "{ a: string, b?: number }",
    ],
    [
      { type: "object", properties: { a: { type: "string" } }, additionalProperties: { type: "unknown" } },
      "{ a?: string, [key: string]: unknown }",
    ],
    [
      { type: "object", properties: { function: { type: "string" } }, additionalProperties: true },
      "{ function?: string, [key: string]: unknown }",
    ],
    [{ properties: { x: { type: "boolean" } } }, "{ x?: boolean }"],
    [undefined, "unknown"],
    [{}, "unknown"],
  ])("%j -> %s", (schema, type) => {
    expect(schemaToTs(schema)).toBe(type);
    parsesAsType(type);
  });

  it("quotes keys that are not identifiers", () => {
    const schema = {
      type: "object",
      properties: { "odd-key": { type: "string" }, "2d": { type: "number" }, ok_$: { type: "null" } },
      required: ["odd-key"],
    };
    const type = schemaToTs(schema);
    expect(type).toBe('{ "odd-key": string, "2d"?: number, ok_$?: null }');
    parsesAsType(type);
    expect(formatSignature("f", schema)).toBe('f({ "odd-key": string, "2d"?: number, ok_$?: null })');
    expect(schemaParams(schema).map((p) => p.label)).toEqual(['"odd-key"', '"2d"?', "ok_$?"]);
  });

  it("stops at a depth limit instead of rendering a huge or recursive schema", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 20; i++) schema = { type: "array", items: schema };
    expect(schemaToTs(schema)).toBe(`unknown${"[]".repeat(7)}`);
  });

  it("block layout carries descriptions and defaults as JSDoc, with the same type", () => {
    const schema = {
      type: "object",
      properties: { unit: { enum: ["c", "f"], default: "c", description: "Ends */ here" } },
    };
    expect(schemaToTs(schema, { layout: "block" })).toBe(
      '{\n  /**\n   * Ends *\\/ here\n   * @default "c"\n   */\n  unit?: "c" | "f";\n}',
    );
    expect(formatSignature("t", schema)).toBe('t({ unit?: "c" | "f" = "c" })');
    expect(formatSignature("t", { type: "object", properties: {} })).toBe("t()");
  });

  it("makes the argument optional only when nothing is required", () => {
    expect(argsParameter({ type: "object", properties: { a: { type: "string" } } })).toBe(
      "args?: { a?: string }",
    );
    expect(argsParameter({ type: "object", properties: { a: { type: "string" } }, required: ["a"] })).toBe(
      "args: { a: string }",
    );
  });
});

describe("every shipped module", () => {
  const modules = shippedTypingsModules();

  it("covers the built-ins and every toolset under toolsets/", () => {
    expect(modules.map((m) => m.name)).toEqual([...SHIPPED_MODULE_NAMES]);
  });

  it("renders the same types agents and the editor see (review a change as a diff of the snapshot)", async () => {
    const signatures = renderModuleSignatures(modules);
    const typings = renderModuleTypings(modules);
    await expect(`${signatures}\n\n${"-".repeat(72)}\n\n${typings}`).toMatchFileSnapshot(
      "./__snapshots__/shipped-module-types.txt",
    );
    for (const m of modules) for (const e of m.exports) parsesAsType(schemaToTs(e.spec.inputSchema));
  });
});
