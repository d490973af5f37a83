import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { bindingInvocation, resolveStoreCall, toPositionalArgs } from "./call-args";
import { compileToolset, computeContentHash } from "./compile-toolset";

const SOURCE = `/**
 * Greets people.
 * @hosts api.example.com
 */

interface Options { loud?: boolean }

/** Greets someone.
 * @tool read
 * @param name Who to greet */
export function greet(name: string, greeting = "Hello", options: Options = {}): string {
  const text = \`\${greeting}, \${name}\`;
  return options.loud ? text.toUpperCase() : text;
}
`;

describe("[TOOLSETS] compile and hash", () => {
  it("transpiles with the real TypeScript transpiler to an ES module without types", () => {
    const compiled = compileToolset({
      name: "greeter",
      files: { doc: "# greeter\n\n`greet` greets.", source: SOURCE },
    });
    expect(compiled.compiledJs).toContain('export function greet(name, greeting = "Hello", options = {})');
    expect(compiled.compiledJs).not.toContain("interface Options");
    expect(compiled.compiledJs).not.toContain(": string");
    expect(compiled.description).toBe("Greets people.");
    expect(compiled.declarations.hosts).toEqual(["api.example.com"]);
    expect(compiled.bindings.map((b) => b.name)).toEqual(["greet"]);
    expect(compiled.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("hashes doc + source canonically: CRLF does not matter, any edit does", () => {
    const base = computeContentHash({ doc: "doc", source: SOURCE });
    expect(computeContentHash({ doc: "doc", source: SOURCE.replace(/\n/g, "\r\n") })).toBe(base);
    expect(computeContentHash({ doc: "doc ", source: SOURCE })).not.toBe(base);
    expect(computeContentHash({ doc: "doc", source: `${SOURCE} ` })).not.toBe(base);
    // doc and source cannot trade text and keep the hash.
    expect(computeContentHash({ doc: "ab", source: "c" })).not.toBe(
      computeContentHash({ doc: "a", source: "bc" }),
    );
  });

  it("throws TOOLSET_INVALID with the diagnostics when the toolset is broken", () => {
    let thrown: unknown;
    try {
      compileToolset({
        name: "greeter",
        files: { doc: "greet", source: "/** x\n * @tool maybe */\nexport function greet(d: Date) {}" },
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe("TOOLSET_INVALID");
    expect((thrown as AppError).message).toContain("greeter/toolset.ts:2:");
    expect((thrown as AppError).details).toMatchObject({
      errors: expect.arrayContaining([expect.objectContaining({ line: 3 })]),
    });
  });
});

describe("[TOOLSETS] arguments map to parameters by name", () => {
  const binding = { name: "greet", params: ["name", "greeting", "options"] };

  it("orders named arguments positionally", () => {
    expect(toPositionalArgs(binding, { options: { loud: true }, name: "Ada" })).toEqual([
      "Ada",
      undefined,
      { loud: true },
    ]);
    expect(toPositionalArgs(binding, { name: "Ada" })).toEqual(["Ada"]);
  });

  it("appends a guest-side entry so skipped parameters stay undefined and get their defaults", () => {
    const call = bindingInvocation(
      "export function greet(name, greeting = 'Hello') { return greeting + name; }",
      binding,
      { name: "Ada" },
    );
    expect(call.exportName).toBe("__toolstore_entry");
    expect(call.args).toEqual([{ name: "Ada" }]);
    expect(call.code).toContain('return greet(a["name"], a["greeting"], a["options"]);');
  });

  it("resolves store calls: function may be omitted only for a single binding", () => {
    const one = { name: "webhook", bindings: [{ name: "send" }] };
    const two = { name: "weather", bindings: [{ name: "current_weather" }, { name: "forecast" }] };
    expect(resolveStoreCall(one, { event: "x" })).toEqual({ binding: "send", args: { event: "x" } });
    expect(resolveStoreCall(two, { function: "forecast", days: 2 })).toEqual({
      binding: "forecast",
      args: { days: 2 },
    });
    expect(() => resolveStoreCall(two, { days: 2 })).toThrow(
      'toolset "weather" has 2 functions; name one in arguments.function: "current_weather", "forecast"',
    );
    expect(() => resolveStoreCall(two, { function: "forcast" })).toThrow('did you mean "forecast"?');
  });
});

describe("[TOOLSETS] description fallback", () => {
  it("takes the first prose paragraph of doc.md when toolset.ts has no header text", async () => {
    const { firstParagraph } = await import("./compile-toolset");
    expect(firstParagraph("# units\nConverts units.\n\nMore text.")).toBe("Converts units.");
    expect(firstParagraph("# t\n\n```js\ncode\n```\n\nReal text\nspans lines.")).toBe(
      "Real text spans lines.",
    );
  });
});
