import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { conditionHolds, globToRegExp, type PolicyRule, ruleMatches, validateRule } from "./rules";

describe("rule patterns", () => {
  it("globs match whole capability names", () => {
    expect(globToRegExp("weather.*").test("weather.get_weather")).toBe(true);
    expect(globToRegExp("weather.*").test("weatherx.get")).toBe(false);
    expect(globToRegExp("*").test("anything.at_all")).toBe(true);
    expect(globToRegExp("http.fetch").test("http.fetch2")).toBe(false);
    expect(globToRegExp("a?c.x").test("abc.x")).toBe(true);
    expect(globToRegExp("a+b.(x)").test("a+b.(x)")).toBe(true);
  });
});

describe("rule conditions", () => {
  const args = {
    url: "https://api.example.com/v1",
    tags: ["a", "b"],
    opts: { mode: "fast", n: 3 },
    items: [{ name: "z" }],
  };
  it.each([
    [{ path: "url", op: "eq", value: "https://api.example.com/v1" }, true],
    [{ path: "url", op: "neq", value: "https://api.example.com/v1" }, false],
    [{ path: "missing", op: "neq", value: "x" }, true],
    [{ path: "url", op: "startsWith", value: "https://api.example.com/" }, true],
    [{ path: "url", op: "contains", value: "example" }, true],
    [{ path: "tags", op: "contains", value: "b" }, true],
    [{ path: "tags", op: "contains", value: "c" }, false],
    [{ path: "opts.mode", op: "eq", value: "fast" }, true],
    [{ path: "opts", op: "eq", value: { n: 3, mode: "fast" } }, true],
    [{ path: "items.0.name", op: "eq", value: "z" }, true],
    [{ path: "url", op: "matches", value: "^https://[a-z.]+/v\\d$" }, true],
    [{ path: "opts.n", op: "matches", value: "3" }, false],
  ] as const)("%j -> %s", (condition, expected) => {
    expect(conditionHolds(condition, args)).toBe(expected);
  });

  it("all conditions must hold", () => {
    const rule: PolicyRule = {
      id: "r",
      effect: "allow",
      pattern: "http.*",
      conditions: [
        { path: "url", op: "startsWith", value: "https://" },
        { path: "method", op: "eq", value: "GET" },
      ],
    };
    expect(
      ruleMatches(rule, {
        capability: "http.fetch",
        versionHash: "",
        args: { url: "https://x", method: "GET" },
      }),
    ).toBe(true);
    expect(
      ruleMatches(rule, {
        capability: "http.fetch",
        versionHash: "",
        args: { url: "https://x", method: "POST" },
      }),
    ).toBe(false);
  });
});

describe("validateRule", () => {
  const base: PolicyRule = { id: "r", effect: "deny", pattern: "x.*", conditions: [] };
  it("accepts a good rule", () => expect(() => validateRule(base)).not.toThrow());
  it.each([
    [{ effect: "maybe" }, /effect/],
    [{ pattern: "" }, /pattern/],
    [{ conditions: [{ path: "a", op: "like", value: 1 }] }, /op must be/],
    [{ conditions: [{ path: "a", op: "matches", value: "(" }] }, /invalid regular expression/],
    [{ conditions: [{ path: "a", op: "startsWith", value: 1 }] }, /string value/],
  ])("refuses %j", (patch, message) => {
    const bad = { ...base, ...patch } as PolicyRule;
    expect(() => validateRule(bad)).toThrow(AppError);
    expect(() => validateRule(bad)).toThrow(message);
  });
});
