/**
 * Maps TypeScript type syntax in `toolset.ts` to JSON Schema, from the syntax tree alone (no
 * checker, nothing imported). Anything JSON cannot carry is reported with a line and a fix.
 */
import ts from "typescript";
import { propertyName } from "./literal-value";
import { mergeObjects, mergeUnion } from "./merge-schemas";
import {
  fail,
  type LocalTypeDeclaration,
  type MappedType,
  nodeText,
  type SchemaContext,
} from "./schema-context";
import { jsDocDescription } from "./toolset-jsdoc";
import type { JsonSchema } from "./types";

/**
 * Maps a type node. `where` names the place for messages, e.g. "parameter `unit` of `get_weather`".
 * Returns undefined after recording an error.
 */
export function mapType(node: ts.TypeNode, ctx: SchemaContext, where: string): MappedType | undefined {
  if (ts.isUnionTypeNode(node)) return mapUnion(node, ctx, where);
  if (ts.isParenthesizedTypeNode(node)) return mapType(node.type, ctx, where);
  if (node.kind === ts.SyntaxKind.UndefinedKeyword) {
    return fail(
      ctx,
      node,
      `${where} has type \`undefined\` alone, which JSON cannot carry`,
      "make it optional with `?` and give it a real type, e.g. `name?: string`",
    );
  }
  const schema = mapValueType(node, ctx, where);
  return schema === undefined ? undefined : { schema, optional: false };
}

/** Maps a type that must describe a present JSON value (no `undefined`). */
function mapRequired(node: ts.TypeNode, ctx: SchemaContext, where: string): JsonSchema | undefined {
  const mapped = mapType(node, ctx, where);
  if (mapped === undefined) return undefined;
  if (mapped.optional) {
    return fail(
      ctx,
      node,
      `${where} includes \`undefined\`, which JSON cannot carry here`,
      "remove `| undefined`; use an optional property (`name?: T`) or `| null` instead",
    );
  }
  return mapped.schema;
}

function mapValueType(node: ts.TypeNode, ctx: SchemaContext, where: string): JsonSchema | undefined {
  switch (node.kind) {
    case ts.SyntaxKind.StringKeyword:
      return { type: "string" };
    case ts.SyntaxKind.NumberKeyword:
      return { type: "number" };
    case ts.SyntaxKind.BooleanKeyword:
      return { type: "boolean" };
    case ts.SyntaxKind.UnknownKeyword:
      // `unknown` honestly says "any JSON value": the schema accepts anything and the code must narrow.
      return {};
    case ts.SyntaxKind.AnyKeyword:
      return fail(
        ctx,
        node,
        `${where} has type \`any\`, which has no JSON Schema`,
        "write a concrete type (`string`, `{ ... }`, `string[]`), or `unknown` to accept any JSON value",
      );
    case ts.SyntaxKind.ObjectKeyword:
      return fail(
        ctx,
        node,
        `${where} has type \`object\`, which says nothing about its fields`,
        "write an object type such as `{ name: string }` or `Record<string, unknown>`",
      );
    case ts.SyntaxKind.BigIntKeyword:
      return fail(
        ctx,
        node,
        `${where} has type \`bigint\`, which JSON cannot carry`,
        "write `number` or `string`",
      );
    case ts.SyntaxKind.NullKeyword:
      return { type: "null" };
    case ts.SyntaxKind.VoidKeyword:
    case ts.SyntaxKind.NeverKeyword:
    case ts.SyntaxKind.SymbolKeyword:
      return fail(
        ctx,
        node,
        `${where} has type \`${nodeText(ctx, node)}\`, which JSON cannot carry`,
        "write `string`, `number`, `boolean`, an array or an object type",
      );
  }
  if (ts.isLiteralTypeNode(node)) return mapLiteral(node, ctx, where);
  if (ts.isArrayTypeNode(node)) {
    const items = mapRequired(node.elementType, ctx, `${where} (array element)`);
    return items === undefined ? undefined : { type: "array", items };
  }
  if (ts.isTypeOperatorNode(node) && node.operator === ts.SyntaxKind.ReadonlyKeyword) {
    return mapRequired(node.type, ctx, where);
  }
  if (ts.isTupleTypeNode(node)) {
    return fail(
      ctx,
      node,
      `${where} is a tuple (\`${nodeText(ctx, node)}\`), which agents fill in poorly`,
      "use an object type with named fields, or an array `T[]`",
    );
  }
  if (ts.isTypeLiteralNode(node)) return mapMembers(node.members, ctx, where);
  if (ts.isIntersectionTypeNode(node)) return mapIntersection(node, ctx, where);
  if (ts.isTypeReferenceNode(node)) return mapReference(node, ctx, where);
  if (ts.isFunctionTypeNode(node) || ts.isConstructorTypeNode(node)) {
    return fail(
      ctx,
      node,
      `${where} is a function type, which cannot be passed as JSON`,
      "take the data the function would need instead",
    );
  }
  if (ts.isTemplateLiteralTypeNode(node)) {
    return fail(
      ctx,
      node,
      `${where} is a template literal type`,
      "write `string` and check the format in code",
    );
  }
  return fail(
    ctx,
    node,
    `${where} has type \`${nodeText(ctx, node)}\`, which cannot be mapped to JSON Schema`,
    "write the type out explicitly: `string`, `number`, `boolean`, a union of string literals, `T[]`, or an object type declared in toolset.ts",
  );
}

function mapLiteral(node: ts.LiteralTypeNode, ctx: SchemaContext, where: string): JsonSchema | undefined {
  const lit = node.literal;
  if (lit.kind === ts.SyntaxKind.NullKeyword) return { type: "null" };
  if (lit.kind === ts.SyntaxKind.TrueKeyword) return { type: "boolean", enum: [true] };
  if (lit.kind === ts.SyntaxKind.FalseKeyword) return { type: "boolean", enum: [false] };
  if (ts.isStringLiteral(lit) || ts.isNoSubstitutionTemplateLiteral(lit))
    return { type: "string", enum: [lit.text] };
  if (ts.isNumericLiteral(lit)) return { type: "number", enum: [Number(lit.text)] };
  if (
    ts.isPrefixUnaryExpression(lit) &&
    lit.operator === ts.SyntaxKind.MinusToken &&
    ts.isNumericLiteral(lit.operand)
  ) {
    return { type: "number", enum: [-Number(lit.operand.text)] };
  }
  return fail(ctx, node, `${where} has literal type \`${nodeText(ctx, node)}\`, which cannot be mapped`);
}

function flattenUnion(node: ts.TypeNode, ctx: SchemaContext, out: ts.TypeNode[]): void {
  if (ts.isUnionTypeNode(node)) {
    for (const member of node.types) flattenUnion(member, ctx, out);
  } else if (ts.isParenthesizedTypeNode(node)) {
    flattenUnion(node.type, ctx, out);
  } else {
    // A local alias of a union (`type Unit = "c" | "f"`) joins the enclosing union.
    if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && !node.typeArguments) {
      const decl = ctx.declarations.get(node.typeName.text);
      if (decl && ts.isTypeAliasDeclaration(decl) && ts.isUnionTypeNode(decl.type) && !decl.typeParameters) {
        if (!ctx.resolving.includes(decl.name.text)) {
          ctx.resolving.push(decl.name.text);
          flattenUnion(decl.type, ctx, out);
          ctx.resolving.pop();
          return;
        }
      }
    }
    out.push(node);
  }
}

function mapUnion(node: ts.UnionTypeNode, ctx: SchemaContext, where: string): MappedType | undefined {
  const members: ts.TypeNode[] = [];
  flattenUnion(node, ctx, members);
  let optional = false;
  let nullable = false;
  const schemas: JsonSchema[] = [];
  let failed = false;
  for (const member of members) {
    if (member.kind === ts.SyntaxKind.UndefinedKeyword) {
      optional = true;
      continue;
    }
    if (ts.isLiteralTypeNode(member) && member.literal.kind === ts.SyntaxKind.NullKeyword) {
      nullable = true;
      continue;
    }
    const schema = mapRequired(member, ctx, where);
    if (schema === undefined) failed = true;
    else schemas.push(schema);
  }
  if (failed) return undefined;
  if (schemas.length === 0) {
    if (nullable) return { schema: { type: "null" }, optional };
    return fail(ctx, node, `${where} has no JSON value besides \`undefined\``, "give it a real type");
  }
  let schema = mergeUnion(schemas);
  if (nullable) {
    if (Array.isArray(schema.enum) && typeof schema.type === "string") {
      schema = { ...schema, type: [schema.type, "null"], enum: [...schema.enum, null] };
    } else if (typeof schema.type === "string" && Object.keys(schema).length === 1) {
      schema = { type: [schema.type, "null"] };
    } else {
      schema = { anyOf: [...(Array.isArray(schema.anyOf) ? schema.anyOf : [schema]), { type: "null" }] };
    }
  }
  return { schema, optional };
}

function mapMembers(
  members: readonly ts.TypeElement[],
  ctx: SchemaContext,
  where: string,
): JsonSchema | undefined {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  let additional: JsonSchema | false = false;
  let failed = false;
  for (const member of members) {
    if (ts.isPropertySignature(member)) {
      const name = propertyName(member.name);
      if (name === undefined) {
        fail(ctx, member, `${where} has a computed property name`, "write the property name literally");
        failed = true;
        continue;
      }
      const memberWhere = `property \`${name}\` of ${where}`;
      if (!member.type) {
        fail(ctx, member, `${memberWhere} has no type`, `write \`${name}: string\` (or the type it holds)`);
        failed = true;
        continue;
      }
      const mapped = mapType(member.type, ctx, memberWhere);
      if (mapped === undefined) {
        failed = true;
        continue;
      }
      const description = jsDocDescription(member);
      properties[name] = description ? { ...mapped.schema, description } : mapped.schema;
      if (!member.questionToken && !mapped.optional) required.push(name);
    } else if (ts.isIndexSignatureDeclaration(member)) {
      const key = member.parameters[0]?.type;
      if (!key || key.kind !== ts.SyntaxKind.StringKeyword) {
        fail(
          ctx,
          member,
          `${where} has an index signature whose key is not \`string\``,
          "write `[key: string]: T`",
        );
        failed = true;
        continue;
      }
      const value = mapRequired(member.type, ctx, `index signature of ${where}`);
      if (value === undefined) failed = true;
      else additional = value;
    } else {
      fail(
        ctx,
        member,
        `${where} has a method or call signature (\`${nodeText(ctx, member)}\`), which cannot be passed as JSON`,
        "keep only data properties",
      );
      failed = true;
    }
  }
  if (failed) return undefined;
  const schema: JsonSchema = { type: "object", properties, additionalProperties: additional };
  if (required.length > 0) schema.required = required;
  return schema;
}

function mapIntersection(
  node: ts.IntersectionTypeNode,
  ctx: SchemaContext,
  where: string,
): JsonSchema | undefined {
  const parts = node.types.map((t) => mapRequired(t, ctx, where));
  if (parts.some((p) => p === undefined)) return undefined;
  const objects = parts as JsonSchema[];
  if (!objects.every((p) => p.type === "object" && p.properties && p.additionalProperties === false)) {
    return fail(
      ctx,
      node,
      `${where} is an intersection of types that are not plain object types`,
      "write one object type with all the fields, or intersect only object types without index signatures",
    );
  }
  return mergeObjects(objects);
}

const JSON_HOSTILE: Record<string, string> = {
  Date: "write `string` (for example an ISO 8601 date such as 2024-05-01) and parse it in code",
  Map: "write `Record<string, T>`",
  Set: "write `T[]`",
  Promise: "take the resolved value, not a promise",
  Function: "take the data the function would need instead",
  Object: "write an object type such as `{ name: string }` or `Record<string, unknown>`",
  String: "write `string` (lower case)",
  Number: "write `number` (lower case)",
  Boolean: "write `boolean` (lower case)",
  Uint8Array: "write `string` (base64) or `number[]`",
  ArrayBuffer: "write `string` (base64) or `number[]`",
  RegExp: "write `string` and build the RegExp in code",
};

function mapReference(node: ts.TypeReferenceNode, ctx: SchemaContext, where: string): JsonSchema | undefined {
  const name = ts.isIdentifier(node.typeName) ? node.typeName.text : nodeText(ctx, node.typeName);
  const args = node.typeArguments ?? [];
  if ((name === "Array" || name === "ReadonlyArray") && args.length === 1) {
    const items = mapRequired(args[0] as ts.TypeNode, ctx, `${where} (array element)`);
    return items === undefined ? undefined : { type: "array", items };
  }
  if (name === "Record" && args.length === 2) {
    return mapRecord(node, args[0] as ts.TypeNode, args[1] as ts.TypeNode, ctx, where);
  }
  if (name === "Readonly" && args.length === 1) return mapRequired(args[0] as ts.TypeNode, ctx, where);
  const decl = ctx.declarations.get(name);
  if (decl) {
    if (args.length > 0 || ("typeParameters" in decl && decl.typeParameters)) {
      return fail(
        ctx,
        node,
        `${where} uses the generic type \`${nodeText(ctx, node)}\``,
        `declare a non-generic type for it, e.g. \`interface ${name}Input { ... }\``,
      );
    }
    return mapDeclaration(decl, node, ctx, where);
  }
  const hostile = JSON_HOSTILE[name];
  if (hostile) return fail(ctx, node, `${where} has type \`${name}\`, which JSON cannot carry`, hostile);
  return fail(
    ctx,
    node,
    `${where} has type \`${nodeText(ctx, node)}\`, which is not declared in toolset.ts`,
    `declare \`interface ${name} { ... }\` or \`type ${name} = ...\` in toolset.ts (imports are not available), or write the type inline`,
  );
}

function mapRecord(
  node: ts.TypeNode,
  key: ts.TypeNode,
  value: ts.TypeNode,
  ctx: SchemaContext,
  where: string,
): JsonSchema | undefined {
  const valueSchema = mapRequired(value, ctx, `values of ${where}`);
  if (valueSchema === undefined) return undefined;
  if (key.kind === ts.SyntaxKind.StringKeyword) {
    return { type: "object", additionalProperties: valueSchema };
  }
  const keySchema = mapRequired(key, ctx, `keys of ${where}`);
  if (keySchema === undefined) return undefined;
  if (keySchema.type === "string" && Array.isArray(keySchema.enum)) {
    const keys = keySchema.enum as string[];
    return {
      type: "object",
      properties: Object.fromEntries(keys.map((k) => [k, valueSchema])),
      required: keys,
      additionalProperties: false,
    };
  }
  return fail(ctx, node, `${where} is a Record whose keys are not strings`, "write `Record<string, T>`");
}

function mapDeclaration(
  decl: LocalTypeDeclaration,
  use: ts.Node,
  ctx: SchemaContext,
  where: string,
): JsonSchema | undefined {
  const name = decl.name.text;
  if (ctx.resolving.includes(name)) {
    return fail(
      ctx,
      use,
      `${where} refers to \`${name}\` recursively (${[...ctx.resolving, name].join(" -> ")})`,
      "JSON Schemas here cannot be recursive; limit the nesting to a fixed depth or take a JSON string",
    );
  }
  if (ts.isEnumDeclaration(decl)) {
    return fail(
      ctx,
      use,
      `${where} uses the enum \`${name}\`; enums are not mapped`,
      'write a union of string literals instead, e.g. `type Unit = "c" | "f"`',
    );
  }
  ctx.resolving.push(name);
  try {
    let schema: JsonSchema | undefined;
    if (ts.isTypeAliasDeclaration(decl)) {
      schema = mapRequired(decl.type, ctx, where);
    } else {
      schema = mapInterface(decl, ctx, where);
    }
    if (schema === undefined) return undefined;
    const description = jsDocDescription(decl);
    return description && schema.description === undefined ? { ...schema, description } : schema;
  } finally {
    ctx.resolving.pop();
  }
}

function mapInterface(
  decl: ts.InterfaceDeclaration,
  ctx: SchemaContext,
  where: string,
): JsonSchema | undefined {
  const own = mapMembers(decl.members, ctx, where);
  if (own === undefined) return undefined;
  const parts: JsonSchema[] = [];
  for (const clause of decl.heritageClauses ?? []) {
    for (const base of clause.types) {
      if (!ts.isIdentifier(base.expression) || base.typeArguments) {
        return fail(ctx, base, `${where} extends \`${nodeText(ctx, base)}\`, which cannot be mapped`);
      }
      const baseDecl = ctx.declarations.get(base.expression.text);
      if (!baseDecl) {
        return fail(
          ctx,
          base,
          `${where} extends \`${base.expression.text}\`, which is not declared in toolset.ts`,
          "declare the base interface in toolset.ts",
        );
      }
      const baseSchema = mapDeclaration(baseDecl, base, ctx, where);
      if (baseSchema === undefined) return undefined;
      parts.push(baseSchema);
    }
  }
  if (parts.length === 0) return own;
  if (own.additionalProperties !== false || parts.some((p) => p.type !== "object" || !p.properties)) {
    return fail(
      ctx,
      decl,
      `${where}: interface \`${decl.name.text}\` mixes index signatures with \`extends\``,
      "write one interface with all the fields",
    );
  }
  return mergeObjects([...parts, own]);
}
