/**
 * Agents, the editor and the console must show the same types for every shipped module: the
 * execute_code description (as the MCP backend builds it), the playground's Monaco typings and
 * the console's parameter list are parsed with the TypeScript parser and compared.
 */
import { renderToStaticMarkup } from "react-dom/server";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "@/server/core/actions/engine";
import { builtinModules } from "@/server/core/capabilities/builtins";
import { createMemoryPorts } from "@/server/core/testing/memory-ports";
import { SHIPPED_MODULE_NAMES, shippedToolsets } from "@/server/core/testing/shipped-modules";
import type { Db } from "@/server/db";
import type { ServerEngine } from "@/server/engine";
import { createMcpBackend } from "@/server/mcp/mcp-backend";
import { buildToolsetModule } from "@/server/modules/toolsets";
import { playgroundModules } from "@/server/services/playground";
import { Params } from "./params";

interface Member {
  name: string;
  optional: boolean;
  type: string;
}

interface ArgsType {
  optional: boolean;
  /** The whole argument type, printed without comments and with canonical spacing. */
  type: string;
  /** Its properties, or null when the type is not an object literal. */
  members: Member[] | null;
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

function source(text: string): ts.SourceFile {
  return ts.createSourceFile("x.ts", text, ts.ScriptTarget.ES2022, true);
}

function print(node: ts.Node, file: ts.SourceFile): string {
  return printer.printNode(ts.EmitHint.Unspecified, node, file).replace(/\s+/g, " ").replace(/;? }/g, " }");
}

function membersOf(node: ts.TypeNode, file: ts.SourceFile): Member[] | null {
  if (ts.isTypeLiteralNode(node)) {
    return node.members.filter(ts.isPropertySignature).map((m) => ({
      name: m.name.getText(file),
      optional: !!m.questionToken,
      type: m.type ? print(m.type, file) : "any",
    }));
  }
  // `Record<string, T>` and `{}` have no named properties.
  return ts.isTypeReferenceNode(node) && node.typeName.getText(file) === "Record" ? [] : null;
}

function argsOf(param: ts.ParameterDeclaration | undefined, file: ts.SourceFile): ArgsType {
  if (!param?.type) throw new Error("no typed parameter");
  return {
    optional: !!param.questionToken,
    type: print(param.type, file),
    members: membersOf(param.type, file),
  };
}

/** `name(args: T) [category] — …` lines of the execute_code description. */
function fromDescription(
  description: string,
  module: string,
  exportName: string,
  category: string,
): ArgsType {
  const start = description.indexOf(`"toolstore/${module}" — `);
  if (start < 0) throw new Error(`toolstore/${module} is not in the description`);
  const at = description.indexOf(`\n  ${exportName}(`, start);
  const end = description.indexOf(`) [${category}] — `, at);
  if (at < 0 || end < 0) throw new Error(`${module}.${exportName} is not in the description`);
  const file = source(`declare function f(${description.slice(at + exportName.length + 4, end)}): void;`);
  const fn = file.statements[0] as ts.FunctionDeclaration;
  return argsOf(fn.parameters[0], file);
}

/** `declare module "toolstore/<m>" { export function f(args: T): … }` in the Monaco typings. */
function fromTypings(typings: string): Map<string, ArgsType> {
  const file = source(typings);
  const found = new Map<string, ArgsType>();
  for (const statement of file.statements) {
    if (!ts.isModuleDeclaration(statement) || !statement.body || !ts.isModuleBlock(statement.body)) continue;
    const module = statement.name
      .getText(file)
      .slice(1, -1)
      .replace(/^toolstore\//, "");
    for (const fn of statement.body.statements) {
      if (ts.isFunctionDeclaration(fn) && fn.name) {
        found.set(`${module}.${fn.name.text}`, argsOf(fn.parameters[0], file));
      }
    }
  }
  return found;
}

/** The console's parameter list (`<code>label: type</code>` per parameter). */
function fromConsole(inputSchema: unknown): Member[] {
  const html = renderToStaticMarkup(<Params schema={inputSchema} />);
  const decode = (s: string) =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&#x27;/g, "'")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&");
  return [...html.matchAll(/<code>(.*?)<\/code>/g)].map((m) => {
    const file = source(`type T = { ${decode((m[1] as string).replace(/<!-- -->/g, ""))} };`);
    const [member] = membersOf((file.statements[0] as ts.TypeAliasDeclaration).type, file) ?? [];
    if (!member) throw new Error(`not a parameter: ${m[1]}`);
    return member;
  });
}

let engine: Engine;
let description: string;
let typings: Map<string, ArgsType>;

beforeAll(async () => {
  const toolsets = shippedToolsets();
  engine = createEngine({
    ports: createMemoryPorts(),
    instanceId: "types-agree",
    modules: [
      builtinModules(),
      () =>
        toolsets.map((t) =>
          buildToolsetModule({
            name: t.name,
            description: t.description,
            version: {
              language: "typescript",
              compiledJs: t.compiledJs,
              contentHash: t.contentHash,
              doc: t.doc,
              bindings: t.bindings,
            },
            runtime: () => Promise.reject(new Error("this test runs no binding")),
            runtimes: () => ({}),
          }),
        ),
    ],
  });
  const backend = createMcpBackend({
    db: {} as Db,
    engine: async () => engine as ServerEngine,
    publicUrl: "http://127.0.0.1",
  });
  const identity = {
    id: "k",
    name: "k",
    userId: "u",
    username: "u",
    mode: "default" as const,
    modules: ["*"],
  };
  description = (await backend.describe(identity)).toolDescription;
  const user = { id: "u", username: "u", displayName: "U", role: "admin" as const, sessionId: "s" };
  typings = fromTypings((await playgroundModules(engine, user)).typings);
});

afterAll(() => engine?.close());

describe("types of every shipped module", () => {
  it("agree between the execute_code description, the Monaco typings and the console", async () => {
    const modules = await engine.registry.modules();
    expect(modules.map((m) => m.name)).toEqual([...SHIPPED_MODULE_NAMES]);
    let compared = 0;
    for (const m of modules) {
      for (const e of m.exports) {
        const agent = fromDescription(description, m.name, e.exportName, e.spec.category);
        const editor = typings.get(e.name);
        expect({ capability: e.name, editor }).toEqual({ capability: e.name, editor: agent });
        if (agent.members) {
          expect({ capability: e.name, console: fromConsole(e.spec.inputSchema) }).toEqual({
            capability: e.name,
            console: agent.members,
          });
        }
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(15);
  });

  it("notices a disagreement (the comparison is not vacuous)", () => {
    const file = source("declare function f(args: { a: string, b?: number[] }): void;");
    const base = argsOf((file.statements[0] as ts.FunctionDeclaration).parameters[0], file);
    const changed = source("declare function f(args: { a: string, b?: (number | null)[] }): void;");
    const other = argsOf((changed.statements[0] as ts.FunctionDeclaration).parameters[0], changed);
    expect(other).not.toEqual(base);
    const schema = { type: "object", properties: { a: { type: "string" }, "b-c": { type: "integer" } } };
    expect(fromConsole(schema)).toEqual([
      { name: "a", optional: true, type: "string" },
      { name: '"b-c"', optional: true, type: "number" },
    ]);
  });
});
