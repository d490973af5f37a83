import { describe, expect, it } from "vitest";
import { CATEGORIES, type Category, MODES, type Mode } from "../capabilities/types";
import { evaluateGate, type GateInput } from "./evaluate";
import type { PolicyRule } from "./rules";

function input(overrides: Partial<GateInput> = {}): GateInput {
  return {
    mode: "default",
    category: "write",
    capability: "notes.save",
    versionHash: "v1",
    args: { title: "Q3" },
    rules: [],
    hasSessionGrant: false,
    ...overrides,
  };
}

const rule = (
  effect: PolicyRule["effect"],
  pattern: string,
  extra: Partial<PolicyRule> = {},
): PolicyRule => ({
  id: `${effect}-${pattern}`,
  effect,
  pattern,
  conditions: [],
  ...extra,
});

describe("the gate matrix (mode x category)", () => {
  const expected: Record<Mode, Record<Category, string>> = {
    plan: { read: "allow", write: "blocked", execute: "blocked", external: "blocked" },
    default: { read: "allow", write: "ask", execute: "ask", external: "ask" },
    auto: { read: "allow", write: "allow", execute: "allow", external: "allow" },
  };
  for (const mode of MODES) {
    for (const category of CATEGORIES) {
      it(`${mode} x ${category} -> ${expected[mode][category]}`, () => {
        expect(evaluateGate(input({ mode, category })).decision).toBe(expected[mode][category]);
      });
    }
  }
});

describe("rule precedence: deny > ask > allow > mode x category > session grants", () => {
  it("a deny rule wins over allow and ask rules, also in auto mode", () => {
    const rules = [rule("allow", "notes.*"), rule("ask", "notes.save"), rule("deny", "*")];
    const result = evaluateGate(input({ mode: "auto", rules }));
    expect(result).toMatchObject({ decision: "deny", ruleId: "deny-*" });
  });

  it("a deny rule denies even a read capability", () => {
    expect(evaluateGate(input({ category: "read", rules: [rule("deny", "notes.save")] })).decision).toBe(
      "deny",
    );
  });

  it("an ask rule forces a prompt in auto mode and for reads, and beats an allow rule", () => {
    const rules = [rule("allow", "notes.*"), rule("ask", "notes.save")];
    expect(evaluateGate(input({ mode: "auto", rules })).decision).toBe("ask");
    expect(evaluateGate(input({ category: "read", rules: [rule("ask", "notes.save")] })).decision).toBe(
      "ask",
    );
  });

  it("an ask rule is not skipped by a session grant, and its prompt offers no session grant", () => {
    const result = evaluateGate(input({ rules: [rule("ask", "notes.*")], hasSessionGrant: true }));
    expect(result).toMatchObject({ decision: "ask", sessionGrantable: false });
  });

  it("an allow rule skips the prompt in default mode", () => {
    expect(evaluateGate(input({ rules: [rule("allow", "notes.save")] }))).toMatchObject({
      decision: "allow",
      ruleId: "allow-notes.save",
      via: "rule",
    });
  });

  it("a session grant allows only where the matrix would ask", () => {
    expect(evaluateGate(input({ hasSessionGrant: true }))).toMatchObject({ decision: "allow", via: "grant" });
    expect(evaluateGate(input({ mode: "plan", hasSessionGrant: true })).decision).toBe("blocked");
  });

  it("without rules or grants, default mode asks and offers a session grant", () => {
    expect(evaluateGate(input())).toMatchObject({ decision: "ask", sessionGrantable: true, via: "mode" });
  });

  it("rules apply to the capability name glob and to argument conditions", () => {
    const rules = [
      rule("allow", "http.fetch", {
        conditions: [{ path: "url", op: "startsWith", value: "https://api.example.com/" }],
      }),
    ];
    const base = { category: "external" as const, capability: "http.fetch", rules };
    expect(evaluateGate(input({ ...base, args: { url: "https://api.example.com/v1" } })).decision).toBe(
      "allow",
    );
    expect(evaluateGate(input({ ...base, args: { url: "https://evil.example.net/" } })).decision).toBe("ask");
    expect(
      evaluateGate(input({ ...base, capability: "http.other", args: { url: "https://api.example.com/" } }))
        .decision,
    ).toBe("ask");
  });

  it("a rule with a versionHash applies only to that version", () => {
    const rules = [rule("allow", "notes.save", { versionHash: "v1" })];
    expect(evaluateGate(input({ rules, versionHash: "v1" })).decision).toBe("allow");
    expect(evaluateGate(input({ rules, versionHash: "v2" })).decision).toBe("ask");
  });
});

describe("plan mode blocks", () => {
  it("blocks write, execute and external even with an allow rule; reads run", () => {
    const rules = [rule("allow", "*")];
    for (const category of ["write", "execute", "external"] as const) {
      expect(evaluateGate(input({ mode: "plan", category, rules }))).toMatchObject({
        decision: "blocked",
        via: "mode",
      });
    }
    expect(evaluateGate(input({ mode: "plan", category: "read" })).decision).toBe("allow");
  });

  it("a deny rule still reports deny (not blocked) in plan mode", () => {
    expect(evaluateGate(input({ mode: "plan", rules: [rule("deny", "*")] })).decision).toBe("deny");
  });
});
