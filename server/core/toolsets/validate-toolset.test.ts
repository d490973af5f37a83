import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { listToolsetFolders, readToolsetFolder } from "./read-toolset-folder";
import { formatDiagnostic, validateToolset } from "./validate-toolset";

const TOOLSETS = path.resolve(import.meta.dirname, "../../../toolsets");

const GOOD_SOURCE = `/** Adds two numbers.\n * @tool read */\nexport function add(a: number, b: number) { return a + b; }\n`;

describe("[TOOLSETS] validate", () => {
  it("passes on every TypeScript example toolset shipped in toolsets/ (with the type check)", () => {
    // textkit is Python; server/core/python/parse-python.test.ts validates it (ast in a worker).
    const folders = listToolsetFolders(TOOLSETS).filter((f) => path.basename(f) !== "textkit");
    expect(folders.map((f) => path.basename(f))).toEqual([
      "calculator",
      "chart",
      "lisp",
      "units",
      "weather",
      "webhook",
    ]);
    for (const folder of folders) {
      const validation = validateToolset(readToolsetFolder(folder));
      expect({ folder, errors: validation.errors, warnings: validation.warnings }).toEqual({
        folder,
        errors: [],
        warnings: [],
      });
    }
  });

  it("together the examples cover all four categories", () => {
    const categories = new Set(
      listToolsetFolders(TOOLSETS).flatMap(
        (f) =>
          validateToolset(readToolsetFolder(f), { typecheck: false }).parsed?.bindings.map(
            (b) => b.category,
          ) ?? [],
      ),
    );
    expect([...categories].sort()).toEqual(["execute", "external", "read", "write"]);
  });

  it("requires exactly doc.md and toolset.ts", () => {
    const result = validateToolset({
      name: "adder",
      entries: ["doc.md", "toolset.ts", "toolset.test.ts", "helpers"],
      files: { doc: "add", source: GOOD_SOURCE },
    });
    expect(result.ok).toBe(false);
    expect(result.errors).toEqual([
      expect.objectContaining({
        file: ".",
        message: "a toolset folder holds exactly doc.md and toolset.ts; also found: helpers, toolset.test.ts",
      }),
    ]);
    const missing = validateToolset({
      name: "adder",
      entries: ["toolset.ts"],
      files: { source: GOOD_SOURCE },
    });
    expect(missing.errors.map((e) => e.message)).toEqual(["doc.md is missing"]);
  });

  it("refuses an empty doc.md, no bindings, and a bad folder name", () => {
    const result = validateToolset({
      name: "Bad Name",
      files: { doc: "  \n", source: "export function helper() { return 1; }\n" },
    });
    expect(result.errors.map((e) => formatDiagnostic(e, "toolsets/x"))).toEqual([
      expect.stringContaining("toolsets/x: error: toolset name `Bad Name` is not valid"),
      "toolsets/x/doc.md:1: error: doc.md is empty\n    fix: describe what the toolset is for and how to call each function",
      "toolsets/x/toolset.ts:1: error: toolset.ts has no binding\n    fix: mark at least one exported function with a doc comment holding `@tool <category>`",
    ]);
  });

  it("warns when doc.md does not mention a binding", () => {
    const result = validateToolset({
      name: "adder",
      files: { doc: "# Adder\nAdds numbers.", source: GOOD_SOURCE },
    });
    expect(result.ok).toBe(true);
    expect(result.warnings).toEqual([
      expect.objectContaining({ file: "doc.md", message: "doc.md does not mention `add`" }),
    ]);
  });

  it("type-checks the code against the sandbox globals only (no Node, no DOM)", () => {
    const source = `${GOOD_SOURCE}
/** Reads a file.
 * @tool read */
export function read_file(p: string) { return require("fs").readFileSync(p, "utf8"); }
/** Uses the runtime contract.
 * @tool external */
export async function ok(): Promise<string> { const r = await fetch(env.BASE_URL ?? "http://x"); console.log(r.status); return r.text(); }
/** Typo.
 * @tool read */
export function typo(n: number): number { return n.toFixd(2); }
`;
    const result = validateToolset({ name: "adder", files: { doc: "add read_file ok typo", source } });
    expect(result.errors.map((e) => formatDiagnostic(e))).toEqual([
      expect.stringMatching(
        /^toolset\.ts:7:\d+: error: Cannot find name 'require'\. \(TS\d+\)\n {4}fix: toolset code runs in a sandbox/,
      ),
      expect.stringMatching(
        /^toolset\.ts:13:\d+: error: Property 'toFixd' does not exist on type 'number'\. Did you mean 'toFixed'\?/,
      ),
    ]);
  });

  it("reports a syntax error with its line", () => {
    const result = validateToolset({
      name: "adder",
      files: { doc: "add", source: `${GOOD_SOURCE}\nexport function broken( {\n` },
    });
    expect(result.ok).toBe(false);
    expect(result.errors[0]).toMatchObject({
      file: "toolset.ts",
      line: expect.any(Number),
      message: expect.stringContaining("TS1"),
    });
  });

  it("reads a folder from disk with its entries", () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), "toolset-")), "adder");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "toolset.ts"), GOOD_SOURCE);
    writeFileSync(path.join(dir, "doc.md"), "# adder\n`add` adds.");
    writeFileSync(path.join(dir, "notes.txt"), "x");
    const input = readToolsetFolder(dir);
    expect(input.name).toBe("adder");
    expect(validateToolset(input).errors[0]?.message).toContain("also found: notes.txt");
  });
});
