import { describe, expect, it } from "vitest";
import { pyLiteral, pyTypeOf, typeOf } from "./legacy-param-types";

describe("legacy parameter types", () => {
  it("map enums, arrays and objects to TypeScript, with a note for an unknown type", () => {
    const notes: string[] = [];
    expect(typeOf({ enum: ["c", "f"] }, "unit", notes)).toBe('"c" | "f"');
    expect(typeOf({ type: "array", items: { enum: [1, 2] } }, "xs", notes)).toBe("(1 | 2)[]");
    expect(
      typeOf(
        { type: "object", properties: { a: { type: "integer" }, "b-c": {} }, required: ["a"] },
        "o",
        notes,
      ),
    ).toBe('{ a: number; "b-c"?: unknown }');
    expect(notes).toEqual(["o.b-c has type null, mapped to `unknown` (any JSON value)"]);
  });

  it("map to Python hints", () => {
    expect(pyTypeOf({ enum: ["c", "f"] })).toBe('Literal["c", "f"]');
    expect(pyTypeOf({ type: "array", items: { type: "integer" } })).toBe("list[int]");
    expect(pyTypeOf({ type: "thing" })).toBe("Any");
  });

  it("write JSON values as Python literals", () => {
    expect(pyLiteral({ a: [true, null, 1.5, "x"] })).toBe('{"a": [True, None, 1.5, "x"]}');
    expect(pyLiteral(Number.NaN)).toBe("None");
  });
});
