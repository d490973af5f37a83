/**
 * One `@tool` function of `toolset.ts` read into a binding: its name and shape (exported, one
 * signature, not a generator or generic), its category, its description, and an input schema
 * built from its parameters' types, defaults and `@param` docs. Nothing is run.
 */
import ts from "typescript";
import { formatSignature } from "../capabilities/schema-to-ts";
import { CATEGORIES, type Category } from "../capabilities/types";
import { literalValue, schemaFromDefault } from "./literal-value";
import { lineOf, type SchemaContext } from "./schema-context";
import { type Collector, hasModifier, report, tagComment } from "./toolset-jsdoc";
import { mapType } from "./type-to-schema";
import type { JsonSchema, ToolsetBinding } from "./types";

/** Reports what makes the function unusable as a binding: not exported, overloads, generator, generic. */
function checkShape(
  fn: ts.FunctionDeclaration,
  name: ts.Identifier,
  names: Map<string, number>,
  c: Collector,
) {
  const where = `\`${name.text}\``;
  if (hasModifier(fn, ts.SyntaxKind.DefaultKeyword)) {
    report(
      c,
      name,
      `@tool function ${where} is a default export`,
      `write \`export function ${name.text}(...)\` without \`default\``,
    );
  } else if (!hasModifier(fn, ts.SyntaxKind.ExportKeyword)) {
    report(c, name, `@tool function ${where} is not exported`, `write \`export function ${name.text}(...)\``);
  }
  if ((names.get(name.text) ?? 0) > 1 || !fn.body) {
    report(
      c,
      name,
      `@tool function ${where} has overloads`,
      "write one signature; a binding has exactly one input schema",
    );
  }
  if (fn.asteriskToken) {
    report(c, name, `@tool function ${where} is a generator`, "return an array or an object instead");
  }
  if (fn.typeParameters && fn.typeParameters.length > 0) {
    report(
      c,
      fn.typeParameters[0] as ts.Node,
      `@tool function ${where} is generic`,
      "write concrete parameter types",
    );
  }
}

/** The category `@tool <category>` names, or undefined (reported) when it is missing or unknown. */
function readCategory(toolTag: ts.JSDocTag, where: string, c: Collector): Category | undefined {
  const categoryText = tagComment(toolTag).split(/\s+/)[0] ?? "";
  if (!categoryText) {
    report(
      c,
      toolTag,
      `@tool on ${where} has no category`,
      `write \`@tool read\`, \`@tool write\`, \`@tool execute\` or \`@tool external\``,
    );
    return undefined;
  }
  if (!(CATEGORIES as readonly string[]).includes(categoryText)) {
    report(
      c,
      toolTag,
      `@tool on ${where} has unknown category \`${categoryText}\``,
      `the category is one of ${CATEGORIES.map((k) => `\`${k}\``).join(", ")}`,
    );
    return undefined;
  }
  return categoryText as Category;
}

/** `@param name text` of the comment, by parameter name. */
function readParamDocs(block: ts.JSDoc, c: Collector): Map<string, string> {
  const paramDocs = new Map<string, string>();
  for (const tag of block.tags ?? []) {
    if (ts.isJSDocParameterTag(tag)) {
      const paramName = ts.isIdentifier(tag.name) ? tag.name.text : tag.name.getText(c.sourceFile);
      paramDocs.set(paramName, tagComment(tag).replace(/^-\s*/, ""));
    }
  }
  return paramDocs;
}

interface InputShape {
  properties: Record<string, JsonSchema>;
  required: string[];
  params: string[];
}

/** The schema of one parameter, or undefined (reported) when it cannot be an argument. */
function parameterSchema(
  param: ts.ParameterDeclaration & { name: ts.Identifier },
  where: string,
  c: Collector,
  ctx: SchemaContext,
): { schema: JsonSchema; optional: boolean; initial: ReturnType<typeof literalValue> } | undefined {
  const paramName = param.name.text;
  const paramWhere = `parameter \`${paramName}\` of ${where}`;
  if (param.dotDotDotToken) {
    report(
      c,
      param,
      `${paramWhere} is a rest parameter`,
      `take an array instead: \`${paramName}: string[]\``,
    );
    return undefined;
  }
  const initial = param.initializer ? literalValue(param.initializer) : undefined;
  const optional = Boolean(param.questionToken || param.initializer);
  if (param.type) {
    const mapped = mapType(param.type, ctx, paramWhere);
    if (!mapped) return undefined;
    return { schema: mapped.schema, optional: optional || mapped.optional, initial };
  }
  const schema = initial ? schemaFromDefault(initial.value) : undefined;
  if (!schema) {
    report(c, param, `${paramWhere} has no type`, `write \`${paramName}: string\` (or the type it takes)`);
    return undefined;
  }
  return { schema, optional, initial };
}

function readParameters(
  fn: ts.FunctionDeclaration,
  paramDocs: Map<string, string>,
  where: string,
  c: Collector,
  ctx: SchemaContext,
): InputShape {
  const shape: InputShape = { properties: {}, required: [], params: [] };
  for (const param of fn.parameters) {
    if (!ts.isIdentifier(param.name)) {
      report(
        c,
        param,
        `a parameter of ${where} is destructured; arguments map to parameters by name`,
        "name each parameter: `(location: string, unit?: string)`",
      );
      continue;
    }
    const paramName = param.name.text;
    if (paramName === "this") continue;
    const read = parameterSchema(param as ts.ParameterDeclaration & { name: ts.Identifier }, where, c, ctx);
    if (!read) continue;
    let schema = read.schema;
    const doc = paramDocs.get(paramName);
    if (doc) schema = { ...schema, description: doc };
    if (read.initial) schema = { ...schema, default: read.initial.value };
    shape.properties[paramName] = schema;
    shape.params.push(paramName);
    if (!read.optional) shape.required.push(paramName);
  }
  return shape;
}

/** A `@param` for a name the function does not take is a warning: the doc is stale or misspelt. */
function checkParamDocsMatch(
  fn: ts.FunctionDeclaration,
  block: ts.JSDoc,
  paramDocs: Map<string, string>,
  where: string,
  c: Collector,
): void {
  for (const [docName] of paramDocs) {
    if (fn.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === docName)) continue;
    const tag = (block.tags ?? []).find(
      (t) => ts.isJSDocParameterTag(t) && t.name.getText(c.sourceFile) === docName,
    );
    report(
      c,
      tag ?? block,
      `@param \`${docName}\` does not match a parameter of ${where}`,
      undefined,
      "warning",
    );
  }
}

/**
 * @param names how many function declarations of each name the file has (more than one: overloads)
 * @returns the binding, or undefined when the function has errors (reported in `c` and `ctx`)
 */
export function parseBinding(
  fn: ts.FunctionDeclaration,
  block: ts.JSDoc,
  toolTag: ts.JSDocTag,
  names: Map<string, number>,
  c: Collector,
  ctx: SchemaContext,
): ToolsetBinding | undefined {
  const beforeOwn = c.diagnostics.length;
  const beforeTypes = ctx.diagnostics.length;
  if (!fn.name) {
    report(
      c,
      fn,
      "a @tool function needs a name; the name is the binding name",
      "write `export function my_tool(...)`",
    );
    return undefined;
  }
  const name = fn.name.text;
  const where = `\`${name}\``;
  checkShape(fn, fn.name, names, c);
  const category = readCategory(toolTag, where, c);
  const description = (ts.getTextOfJSDocComment(block.comment) ?? "").trim();
  if (!description) {
    report(
      c,
      fn.name,
      `@tool function ${where} has no description`,
      "write what it does in the doc comment above `@tool`; agents read it to decide when to call it",
    );
  }
  const paramDocs = readParamDocs(block, c);
  const { properties, required, params } = readParameters(fn, paramDocs, where, c, ctx);
  checkParamDocsMatch(fn, block, paramDocs, where, c);

  const hasErrors =
    c.diagnostics.slice(beforeOwn).some((d) => d.severity === "error") ||
    ctx.diagnostics.slice(beforeTypes).some((d) => d.severity === "error");
  if (hasErrors || !category || !description) return undefined;
  const inputSchema: JsonSchema = { type: "object", properties, additionalProperties: false };
  if (required.length > 0) inputSchema.required = required;
  return {
    name,
    description,
    category,
    inputSchema,
    params,
    signature: formatSignature(name, inputSchema),
    async: hasModifier(fn, ts.SyntaxKind.AsyncKeyword),
    line: lineOf(c.sourceFile, fn.name).line,
  };
}
