/**
 * TypeScript declarations for the playground editor, generated from the mounted modules' specs:
 * `declare module "toolstore/<m>" { export function f(args: {...}): Promise<unknown> }` with the
 * descriptions as JSDoc, so Monaco completes export names and argument shapes. Types come from
 * ../capabilities/schema-to-ts, as in the execute_code description. Pure text out.
 */
import { argsParameter, docBlock, isIdentifier } from "../capabilities/schema-to-ts";
import type { JsonSchema } from "../capabilities/types";

export interface TypingsExport {
  exportName: string;
  spec: { description: string; category: string; inputSchema: JsonSchema };
}

export interface TypingsModule {
  name: string;
  description: string;
  exports: readonly TypingsExport[];
}

const CATEGORY_NOTE: Record<string, string> = {
  read: "runs without asking in every mode",
  write: "asks for approval in default mode; blocked in plan mode",
  execute: "asks for approval in default mode; blocked in plan mode",
  external: "asks for approval in default mode; blocked in plan mode",
};

/** One `declare module` per mounted module, plus the sandbox's `console`. */
export function renderModuleTypings(modules: readonly TypingsModule[]): string {
  const out: string[] = [
    "// Generated from the mounted capability modules. Only these imports exist in an action.",
    "declare const console: {",
    "  log(...data: unknown[]): void;",
    "  info(...data: unknown[]): void;",
    "  warn(...data: unknown[]): void;",
    "  error(...data: unknown[]): void;",
    "  debug(...data: unknown[]): void;",
    "};",
    "",
  ];
  for (const m of modules) {
    if (m.description) out.push(docBlock([m.description], ""));
    out.push(`declare module "toolstore/${m.name}" {`);
    for (const e of m.exports) {
      if (!isIdentifier(e.exportName)) continue;
      const { description, category, inputSchema } = e.spec;
      const note = CATEGORY_NOTE[category] ?? "";
      const doc = [
        description || `${m.name}.${e.exportName}`,
        "",
        `Category: ${category}${note ? ` — ${note}` : ""}.`,
      ];
      out.push(docBlock(doc, "  "));
      const args = argsParameter(inputSchema, { layout: "block", indent: "  " });
      out.push(`  export function ${e.exportName}(${args}): Promise<any>;`);
    }
    out.push("}", "");
  }
  return out.join("\n");
}

export interface TypingsLibrary {
  name: string;
  description: string;
  builtOn: string;
  declarations?: string;
  exports: readonly { name: string; description: string; signature: string }[];
}

/** One `declare module "toolstore/lib/<name>"` per library: plain synchronous functions, no category. */
export function renderLibraryTypings(libraries: readonly TypingsLibrary[]): string {
  const out: string[] = [];
  for (const lib of libraries) {
    out.push(
      docBlock(
        [lib.description, "", `Library (${lib.builtOn}): runs inside the action; no gate, no approval.`],
        "",
      ),
    );
    out.push(`declare module "toolstore/lib/${lib.name}" {`);
    if (lib.declarations) for (const line of lib.declarations.split("\n")) out.push(`  ${line}`);
    for (const e of lib.exports) {
      if (!isIdentifier(e.name)) continue;
      out.push(docBlock([e.description || `${lib.name}.${e.name}`], "  "));
      out.push(`  export function ${e.signature};`);
    }
    out.push("}", "");
  }
  return out.join("\n");
}
