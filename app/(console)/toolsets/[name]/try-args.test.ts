import { describe, expect, it } from "vitest";
import { parseArgs } from "./try-args";

describe("parseArgs", () => {
  it("takes one JSON object as the arguments", () => {
    expect(parseArgs('{ "a": 1, "b": [2] }')).toEqual({ args: { a: 1, b: [2] } });
    expect(parseArgs("{}")).toEqual({ args: {} });
  });

  it("refuses JSON that is not one object", () => {
    for (const text of ["[]", "null", "3", '"x"'])
      expect(parseArgs(text)).toEqual({ error: "the arguments are one JSON object" });
  });

  it("says why text is not JSON", () => {
    const result = parseArgs("{ a: 1 }");
    expect("error" in result && result.error.length > 0).toBe(true);
  });
});
