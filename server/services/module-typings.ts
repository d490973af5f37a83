/**
 * TypeScript declarations for the playground editor, generated from the mounted modules' specs:
 * `declare module "toolstore/<m>" { export function f(args: {...}): Promise<unknown> }` with the
 * descriptions as JSDoc, so Monaco completes export names and argument shapes. Pure text out.
 */
import type { JsonSchema } from "../core/capabilities/types";

export interface TypingsExport {
  exportName: string;
  spec: { description: string; category: string; inputSchema: JsonSchema };
}

export interface TypingsModule {
  name: string;
  description: string;
  exports: readonly TypingsExport[];
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const MAX_DEPTH = 6;

const CATEGORY_NOTE: Record<string, string> = {
  read: "runs without asking in every mode",
  write: "asks for approval in default mode; blocked in plan mode",
  execute: "asks for approval in default mode; blocked in plan mode",
  external: "asks for approval in default mode; blocked in plan mode",
};

/** Text safe inside a JSDoc block: no comment terminator, no stray leading stars. */
function docText(text: string): string {
  return text.replace(/\*\//g, "*\\/").replace(/\r/g, "");
}

function docBlock(lines: string[], indent: string): string {
  const body = lines
    .flatMap((l) => docText(l).split("\n"))
    .map((l) => `${indent} * ${l}`.trimEnd())
    .join("\n");
  return `${indent}/**\n${body}\n${indent} */\n`;
}

function propertyKey(key: string): string {
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}

/** A JSON Schema as a TypeScript type, with property descriptions as JSDoc. */
export function schemaToTs(schema: unknown, indent = "", depth = 0): string {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return "unknown";
  const s = schema as JsonSchema;
  if (depth > MAX_DEPTH) return "unknown";
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(" | ") || "never";
  if (s.const !== undefined) return JSON.stringify(s.const);
  const union = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(union))
    return union.map((u) => schemaToTs(u, indent, depth + 1)).join(" | ") || "unknown";
  if (Array.isArray(s.type)) {
    return s.type.map((t) => schemaToTs({ ...s, type: t }, indent, depth)).join(" | ");
  }
  switch (s.type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      if (Array.isArray(s.prefixItems)) {
        return `[${(s.prefixItems as unknown[]).map((i) => schemaToTs(i, indent, depth + 1)).join(", ")}]`;
      }
      const item = schemaToTs(s.items, indent, depth + 1);
      return /^[\w$".]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case "object":
      return objectToTs(s, indent, depth);
    default:
      if (s.properties) return objectToTs(s, indent, depth);
      return "unknown";
  }
}

function objectToTs(s: JsonSchema, indent: string, depth: number): string {
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const inner = `${indent}  `;
  const lines: string[] = [];
  for (const [key, prop] of Object.entries(props)) {
    const doc: string[] = [];
    if (typeof prop?.description === "string" && prop.description) doc.push(prop.description);
    if (prop && prop.default !== undefined) doc.push(`@default ${JSON.stringify(prop.default)}`);
    const optional = required.has(key) ? "" : "?";
    lines.push(
      `${doc.length ? docBlock(doc, inner) : ""}${inner}${propertyKey(key)}${optional}: ${schemaToTs(prop, inner, depth + 1)};`,
    );
  }
  const extra = s.additionalProperties;
  if (extra && typeof extra === "object") {
    lines.push(`${inner}[key: string]: ${schemaToTs(extra, inner, depth + 1)};`);
  } else if (lines.length === 0 && extra !== false) {
    return "Record<string, unknown>";
  }
  if (lines.length === 0) return "{}";
  return `{\n${lines.join("\n")}\n${indent}}`;
}

function hasRequired(schema: JsonSchema): boolean {
  return Array.isArray(schema.required) && schema.required.length > 0;
}

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
    if (m.description) out.push(docBlock([m.description], "").trimEnd());
    out.push(`declare module "toolstore/${m.name}" {`);
    for (const e of m.exports) {
      if (!IDENTIFIER.test(e.exportName)) continue;
      const { description, category, inputSchema } = e.spec;
      const note = CATEGORY_NOTE[category] ?? "";
      const doc = [
        description || `${m.name}.${e.exportName}`,
        "",
        `Category: ${category}${note ? ` — ${note}` : ""}.`,
      ];
      out.push(docBlock(doc, "  ").trimEnd());
      const argsType = schemaToTs(inputSchema ?? {}, "  ");
      const optional = hasRequired(inputSchema ?? {}) ? "" : "?";
      out.push(`  export function ${e.exportName}(args${optional}: ${argsType}): Promise<any>;`);
    }
    out.push("}", "");
  }
  return out.join("\n");
}
