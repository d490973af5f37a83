import ts from "typescript";
import { describe, expect, it } from "vitest";
import { createStoreModule } from "../capabilities/builtins/store";
import { renderModuleTypings, type TypingsModule } from "./module-typings";

/** The shipped toolstore/store, whose `execute` passes a toolset's own arguments through. */
const noCatalog = { list: async () => [], search: async () => [], info: async () => null };
const store = createStoreModule(noCatalog);

const modules: TypingsModule[] = [
  {
    name: "calculator",
    description: "Arithmetic. Never guesses.",
    exports: [
      {
        exportName: "evaluate",
        spec: {
          description: "Evaluate an expression. Ends a comment: */ still safe.",
          category: "read",
          inputSchema: {
            type: "object",
            properties: {
              expression: { type: "string", description: "e.g. 2 * 3" },
              variables: { type: "object", additionalProperties: { type: "number" }, default: {} },
              precision: { type: "integer" },
            },
            required: ["expression"],
            additionalProperties: false,
          },
        },
      },
    ],
  },
  {
    name: "notes",
    description: "",
    exports: [
      {
        exportName: "save",
        spec: {
          description: "Save a note",
          category: "write",
          inputSchema: {
            type: "object",
            properties: {
              "odd-key": { type: ["string", "null"] },
              tags: { type: "array", items: { enum: ["a", "b"] } },
            },
          },
        },
      },
    ],
  },
  {
    name: store.name,
    description: store.description,
    // As the registry names them: store.execute is `execute` in toolstore/store.
    exports: store.exports.map((e) => ({
      exportName: e.spec.name.slice(store.name.length + 1),
      spec: e.spec,
    })),
  },
];

/** Type-check an action against the generated declarations; returns the error messages. */
function check(action: string): string[] {
  const files: Record<string, string> = {
    "/toolstore.d.ts": renderModuleTypings(modules),
    "/action.ts": action,
  };
  const options: ts.CompilerOptions = { strict: true, noEmit: true, lib: ["lib.es2022.d.ts"], types: [] };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files[name] ?? readFile(name);
  host.fileExists = (name) => name in files || ts.sys.fileExists(name);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version) =>
    name in files ? ts.createSourceFile(name, files[name] as string, version) : getSourceFile(name, version);
  const program = ts.createProgram(Object.keys(files), options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}

describe("module typings", () => {
  it("declares each module so a correct action type-checks", () => {
    const errors = check(`
      import { evaluate } from "toolstore/calculator";
      import { save } from "toolstore/notes";
      export default async function () {
        const r = await evaluate({ expression: "1+1", variables: { x: 2 } });
        await save();
        await save({ "odd-key": null, tags: ["a"] });
        console.log(r.value);
      }`);
    expect(errors).toEqual([]);
  });

  it("lets store.execute pass a toolset's own arguments beside `function`", () => {
    const errors = check(`
      import { execute } from "toolstore/store";
      export default async function () {
        await execute({ tool_name: "textkit", arguments: { function: "word_count", text: "one two" } });
        await execute({ tool_name: "calc", arguments: { a: 1, b: 2 } });
      }`);
    expect(errors).toEqual([]);
    const wrong = check(`
      import { execute } from "toolstore/store";
      export default async function () {
        await execute({ tool_name: "x", arguments: { function: 1 } });
      }`);
    expect(wrong.join("\n")).toMatch(/'number' is not assignable to type 'string'/);
  });

  it("rejects unknown exports, missing required arguments and wrong types", () => {
    const errors = check(`
      import { evaluate, nope } from "toolstore/calculator";
      export default async function () {
        await evaluate({ precision: 2 });
        await evaluate({ expression: 3 });
      }`).join("\n");
    expect(errors).toMatch(/no exported member 'nope'/);
    expect(errors).toMatch(/'expression' is missing/);
    expect(errors).toMatch(/'number' is not assignable to type 'string'/);
  });

  it("keeps descriptions as JSDoc without letting them close the comment", () => {
    const text = renderModuleTypings(modules);
    expect(text).toContain("* Evaluate an expression. Ends a comment: *\\/ still safe.");
    expect(text).toContain("Category: write — asks for approval in default mode; blocked in plan mode.");
    expect(text).toContain("@default {}");
  });
});
