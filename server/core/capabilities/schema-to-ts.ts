/**
 * The one JSON Schema -> TypeScript renderer. The execute_code description, binding signatures,
 * the playground's Monaco typings and the console's parameter lists all render types here, so
 * they show the same type for the same schema. Pure text out, no imports at run time: the client
 * bundle may import it.
 */
import type { JsonSchema } from "./types";

export interface TypeTextOptions {
  /**
   * `inline` is one line (`{ a: string, b?: number }`) for agents and the console; `block` is an
   * indented declaration with property descriptions and defaults as JSDoc, for the editor.
   */
  layout?: "inline" | "block";
  /** Indentation of the line the type starts on (block layout). */
  indent?: string;
}

/** A parameter of an object schema, as the console lists it. */
export interface SchemaParam {
  key: string;
  /** The key as TypeScript writes it, with `?` when optional: `unit?`, `"odd-key"`. */
  label: string;
  optional: boolean;
  type: string;
  /** JSON text of the default, when the schema has one. */
  default?: string;
  description?: string;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** Deeper schemas render as `unknown`: a recursive or huge schema must not become a huge type. */
const MAX_DEPTH = 6;

type Layout = NonNullable<TypeTextOptions["layout"]>;

export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name);
}

/** A property key as TypeScript writes it: bare when it is an identifier, else quoted. */
function propertyKey(key: string): string {
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}

/** A JSON Schema as a TypeScript type expression. */
export function schemaToTs(schema: unknown, options: TypeTextOptions = {}): string {
  return render(schema, options.layout ?? "inline", options.indent ?? "", 0);
}

/** The properties of an object schema, in declaration order. */
export function schemaParams(schema: unknown): SchemaParam[] {
  if (!isSchema(schema)) return [];
  const required = requiredSet(schema);
  return Object.entries(properties(schema)).map(([key, prop]) => {
    const optional = !required.has(key);
    const param: SchemaParam = {
      key,
      label: `${propertyKey(key)}${optional ? "?" : ""}`,
      optional,
      type: render(prop, "inline", "", 1),
    };
    if (isSchema(prop) && prop.default !== undefined) param.default = JSON.stringify(prop.default);
    if (isSchema(prop) && typeof prop.description === "string" && prop.description) {
      param.description = prop.description;
    }
    return param;
  });
}

/** `args: T`, or `args?: T` when the schema requires nothing (a call may pass no argument). */
export function argsParameter(inputSchema: unknown, options: TypeTextOptions = {}): string {
  const required = isSchema(inputSchema) && requiredSet(inputSchema).size > 0;
  return `args${required ? "" : "?"}: ${schemaToTs(inputSchema ?? {}, options)}`;
}

/**
 * `name({ a: string, b?: number = 1 })`: the one object argument as agents pass it, with defaults;
 * `name()` when it takes nothing. For signature lines in `info`, the CLI and diffs.
 */
export function formatSignature(name: string, inputSchema: JsonSchema): string {
  const params = schemaParams(inputSchema);
  if (params.length === 0) return `${name}()`;
  const parts = params.map((p) => `${p.label}: ${p.type}${p.default === undefined ? "" : ` = ${p.default}`}`);
  return `${name}({ ${parts.join(", ")} })`;
}

/** Text safe inside a JSDoc block: no comment terminator, no carriage returns. */
function docText(text: string): string {
  return text.replace(/\*\//g, "*\\/").replace(/\r/g, "");
}

/** A JSDoc block at `indent`, one ` * ` line per line of text. */
export function docBlock(lines: readonly string[], indent: string): string {
  const body = lines
    .flatMap((l) => docText(l).split("\n"))
    .map((l) => `${indent} * ${l}`.trimEnd())
    .join("\n");
  return `${indent}/**\n${body}\n${indent} */`;
}

function isSchema(value: unknown): value is JsonSchema {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

function properties(schema: JsonSchema): Record<string, unknown> {
  return isSchema(schema.properties) ? (schema.properties as Record<string, unknown>) : {};
}

function requiredSet(schema: JsonSchema): Set<string> {
  return new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
}

/** Wrap a union or intersection where a tighter operator follows (`[]`, `&`). */
function group(type: string): string {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < type.length; i++) {
    const c = type[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "{" || c === "[" || c === "(" || c === "<") depth++;
    else if (c === "}" || c === "]" || c === ")" || c === ">") depth--;
    else if (depth === 0 && (c === "|" || c === "&")) return `(${type})`;
  }
  return type;
}

function join(types: string[], op: " | " | " & ", empty: string): string {
  const unique = [...new Set(types)];
  if (unique.length === 0) return empty;
  return unique.length === 1
    ? (unique[0] as string)
    : unique.map((t) => (op === " & " ? group(t) : t)).join(op);
}

function render(schema: unknown, layout: Layout, indent: string, depth: number): string {
  if (!isSchema(schema) || depth > MAX_DEPTH) return "unknown";
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum))
    return join(
      schema.enum.map((v) => JSON.stringify(v)),
      " | ",
      "never",
    );
  const union = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(union)) {
    return join(
      union.map((u) => render(u, layout, indent, depth + 1)),
      " | ",
      "unknown",
    );
  }
  if (Array.isArray(schema.allOf)) {
    return join(
      schema.allOf.map((u) => render(u, layout, indent, depth + 1)),
      " & ",
      "unknown",
    );
  }
  if (Array.isArray(schema.type)) {
    return join(
      schema.type.map((t) => render({ ...schema, type: t }, layout, indent, depth)),
      " | ",
      "unknown",
    );
  }
  switch (schema.type) {
    case "string":
    case "boolean":
    case "null":
      return schema.type;
    case "number":
    case "integer":
      return "number";
    case "array": {
      if (Array.isArray(schema.prefixItems)) {
        const items = schema.prefixItems.map((i) => render(i, layout, indent, depth + 1));
        return `[${items.join(", ")}]`;
      }
      return `${group(render(schema.items, layout, indent, depth + 1))}[]`;
    }
    case "object":
      return renderObject(schema, layout, indent, depth);
    default:
      return schema.properties ? renderObject(schema, layout, indent, depth) : "unknown";
  }
}

function renderObject(schema: JsonSchema, layout: Layout, indent: string, depth: number): string {
  const required = requiredSet(schema);
  const inner = `${indent}  `;
  const members: string[] = [];
  for (const [key, prop] of Object.entries(properties(schema))) {
    const type = render(prop, layout, inner, depth + 1);
    const member = `${propertyKey(key)}${required.has(key) ? "" : "?"}: ${type}`;
    if (layout === "inline") {
      members.push(member);
      continue;
    }
    const doc: string[] = [];
    if (isSchema(prop) && typeof prop.description === "string" && prop.description)
      doc.push(prop.description);
    if (isSchema(prop) && prop.default !== undefined) doc.push(`@default ${JSON.stringify(prop.default)}`);
    members.push(`${doc.length ? `${docBlock(doc, inner)}\n` : ""}${inner}${member};`);
  }
  const extra = schema.additionalProperties;
  // `additionalProperties: true` (store.execute's `arguments`) takes any other key as well.
  const extraType = isSchema(extra)
    ? render(extra, layout, inner, depth + 1)
    : extra === true
      ? "unknown"
      : undefined;
  if (members.length === 0) {
    if (extraType !== undefined) return `Record<string, ${extraType}>`;
    return extra === false ? "{}" : "Record<string, unknown>";
  }
  if (extraType !== undefined) {
    members.push(
      layout === "inline" ? `[key: string]: ${extraType}` : `${inner}[key: string]: ${extraType};`,
    );
  }
  return layout === "inline" ? `{ ${members.join(", ")} }` : `{\n${members.join("\n")}\n${indent}}`;
}
