import ts from "typescript";
import { describe, expect, it } from "vitest";
import { literalValue, schemaFromDefault } from "./literal-value";
import { mergeObjects, mergeUnion } from "./merge-schemas";

function initializer(source: string): ts.Expression {
  const file = ts.createSourceFile("x.ts", `const x = ${source};`, ts.ScriptTarget.ES2022, true);
  const statement = file.statements[0] as ts.VariableStatement;
  return statement.declarationList.declarations[0]?.initializer as ts.Expression;
}

describe("literal defaults", () => {
  it("read literals, negative numbers and nested arrays and objects as JSON", () => {
    expect(literalValue(initializer('{ a: [1, -2, "x"], "b": null } as const'))).toEqual({
      value: { a: [1, -2, "x"], b: null },
    });
  });

  it("have no value when anything is computed", () => {
    expect(literalValue(initializer("[1, Date.now()]"))).toBeUndefined();
    expect(literalValue(initializer("{ [k]: 1 }"))).toBeUndefined();
  });

  it("give an unannotated parameter the schema of a scalar default only", () => {
    expect(schemaFromDefault("c")).toEqual({ type: "string" });
    expect(schemaFromDefault([1])).toBeUndefined();
  });
});

describe("merged schemas", () => {
  it("a union of literals of one type is one enum; true | false is boolean; string absorbs its literals", () => {
    expect(
      mergeUnion([
        { type: "string", enum: ["a"] },
        { type: "string", enum: ["b"] },
      ]),
    ).toEqual({
      type: "string",
      enum: ["a", "b"],
    });
    expect(
      mergeUnion([
        { type: "boolean", enum: [true] },
        { type: "boolean", enum: [false] },
      ]),
    ).toEqual({
      type: "boolean",
    });
    expect(mergeUnion([{ type: "string" }, { type: "string", enum: ["a"] }, { type: "number" }])).toEqual({
      anyOf: [{ type: "string" }, { type: "number" }],
    });
  });

  it("an intersection of objects keeps every property and required name", () => {
    expect(
      mergeObjects([
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { type: "object", properties: { b: { type: "number" } } },
      ]),
    ).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "number" } },
      additionalProperties: false,
      required: ["a"],
    });
  });
});
