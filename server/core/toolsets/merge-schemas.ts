/** Merging JSON Schemas of union and intersection members into one schema. */
import type { JsonSchema, JsonValue } from "./types";

/** Literal unions of one JSON type become one `enum`; `true | false` becomes `boolean`. */
export function mergeUnion(schemas: JsonSchema[]): JsonSchema {
  if (schemas.length === 1) return schemas[0] as JsonSchema;
  const literalOnly = schemas.every((s) => Array.isArray(s.enum) && Object.keys(s).length === 2);
  const types = new Set(schemas.map((s) => s.type));
  if (literalOnly && types.size === 1) {
    const values = [...new Set(schemas.flatMap((s) => s.enum as JsonValue[]))];
    const type = schemas[0]?.type;
    if (type === "boolean" && values.length === 2) return { type: "boolean" };
    return { type, enum: values };
  }
  // Collapse duplicates such as `string | "a"` into the wider member.
  const plain = schemas.filter((s) => Object.keys(s).length === 1 && typeof s.type === "string");
  const plainTypes = new Set(plain.map((s) => s.type));
  const rest = schemas.filter(
    (s) => !(Array.isArray(s.enum) && plainTypes.has(s.type)) && !plain.includes(s),
  );
  const merged = [...plain.filter((s, i) => plain.findIndex((p) => p.type === s.type) === i), ...rest];
  if (merged.length === 1) return merged[0] as JsonSchema;
  return { anyOf: merged };
}

/** An intersection of object schemas: every property, every required name, closed. */
export function mergeObjects(objects: JsonSchema[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required = new Set<string>();
  for (const o of objects) {
    Object.assign(properties, o.properties as Record<string, JsonSchema>);
    for (const r of (o.required as string[] | undefined) ?? []) required.add(r);
  }
  const schema: JsonSchema = { type: "object", properties, additionalProperties: false };
  if (required.size > 0) schema.required = [...required];
  return schema;
}
