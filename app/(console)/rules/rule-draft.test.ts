import { describe, expect, it } from "vitest";
import { fromDraft, parseValue, type StoredRule, showValue, toDraft } from "./rule-draft";

describe("rule drafts", () => {
  it("reads JSON for eq/neq/contains and keeps text as text for startsWith/matches", () => {
    expect(parseValue("eq", "42")).toBe(42);
    expect(parseValue("eq", "true")).toBe(true);
    expect(parseValue("contains", "plain words")).toBe("plain words");
    expect(parseValue("startsWith", "42")).toBe("42");
    expect(parseValue("matches", '"x"')).toBe('"x"');
  });

  it("shows a string that would read as JSON quoted, so it comes back a string", () => {
    expect(showValue("eq", "hello")).toBe("hello");
    expect(showValue("eq", "42")).toBe('"42"');
    expect(showValue("eq", 42)).toBe("42");
    expect(showValue("startsWith", "42")).toBe("42");
    for (const value of ["42", "true", "hello", 7, false, null, ["a"]]) {
      expect(parseValue("eq", showValue("eq", value))).toEqual(value);
    }
  });

  it("round-trips a stored rule and trims what was typed", () => {
    const rule: StoredRule = {
      effect: "allow",
      pattern: "webhook.*",
      description: "build hooks",
      enabled: true,
      versionHash: null,
      conditions: [
        { path: "event", op: "startsWith", value: "build." },
        { path: "n", op: "eq", value: 3 },
      ],
      shadow: true,
      budget: { limit: 5, per: "hour" },
      examples: {
        match: [{ capability: "webhook.send", args: { event: "build.x", n: 3 } }],
        noMatch: [{ capability: "webhook.send", args: {} }],
      },
    };
    expect(fromDraft(toDraft(rule))).toEqual(rule);
    const draft = toDraft(rule);
    expect(fromDraft({ ...draft, pattern: " webhook.* ", versionHash: "  " }).pattern).toBe("webhook.*");
    expect(fromDraft({ ...draft, versionHash: " abc " }).versionHash).toBe("abc");
    expect(fromDraft({ ...draft, budgetLimit: "", examplesMatch: "", examplesNoMatch: "" })).toMatchObject({
      budget: null,
      examples: null,
    });
  });

  it("names the example line that is not a capability and a JSON object", () => {
    expect(() => fromDraft({ ...toDraft(null), examplesMatch: "a.b {}\nhttp.fetch {url" })).toThrow(
      /Must match, line 2/,
    );
  });
});
