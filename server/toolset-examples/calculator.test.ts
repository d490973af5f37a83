import { afterAll, describe, expect, it } from "vitest";
import { closeTestPool, compileExample, runBinding } from "./helpers";

const calculator = compileExample("calculator");
const run = (name: string, args: Record<string, unknown>) => runBinding(calculator, name, args);
afterAll(closeTestPool);

describe("[TOOLSETS] calculator", () => {
  it("declares two read bindings with schemas from the signatures", () => {
    expect(calculator.bindings.map((b) => [b.name, b.category])).toEqual([
      ["evaluate", "read"],
      ["statistics", "read"],
    ]);
    const evaluate = calculator.bindings[0];
    expect(evaluate?.inputSchema).toMatchObject({
      required: ["expression"],
      properties: { variables: { type: "object", additionalProperties: { type: "number" }, default: {} } },
    });
  });

  it("evaluates with precedence, powers, functions and variables", async () => {
    expect(await run("evaluate", { expression: "2 * (3 + 4)^2 / sqrt(16)" })).toMatchObject({
      ok: true,
      value: { value: 24.5 },
    });
    expect(await run("evaluate", { expression: "-2^2" })).toMatchObject({ value: { value: -4 } });
    expect(await run("evaluate", { expression: "2^3^2" })).toMatchObject({ value: { value: 512 } });
    expect(await run("evaluate", { expression: "5! + x", variables: { x: 0.5 } })).toMatchObject({
      value: { value: 120.5 },
    });
    expect(await run("evaluate", { expression: "1200 * (1 + 0.035)^10", precision: 2 })).toMatchObject({
      value: { value: 1692.72 },
    });
  });

  it("names the position of a mistake and refuses division by zero", async () => {
    expect(await run("evaluate", { expression: "2 * (3 + )" })).toEqual({
      ok: false,
      error: 'unexpected ")" at position 10',
      logs: [],
    });
    expect(await run("evaluate", { expression: "1 / (2 - 2)" })).toMatchObject({
      ok: false,
      error: "division by zero",
    });
    expect(await run("evaluate", { expression: "foo + 1" })).toMatchObject({
      ok: false,
      error: expect.stringContaining('unknown name "foo"'),
    });
  });

  it("never evaluates JavaScript", async () => {
    const result = await run("evaluate", { expression: "constructor.constructor('return 1')()" });
    expect(result.ok).toBe(false);
  });

  it("summarizes a list", async () => {
    const result = await run("statistics", { values: [3, 1, 4, 1, 5, 9, 2, 6] });
    expect(result).toMatchObject({ ok: true, value: { count: 8, sum: 31, median: 3.5, min: 1, max: 9 } });
  });
});
