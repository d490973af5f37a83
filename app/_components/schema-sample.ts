/**
 * Sample arguments from a capability's JSON Schema: defaults where the schema has them, else a
 * placeholder of the right type for required fields. For forms and "test a call".
 */
type Schema = { [key: string]: unknown };

function firstType(schema: Schema): string | undefined {
  const t = schema.type;
  if (Array.isArray(t)) return t.find((x) => x !== "null") as string | undefined;
  return typeof t === "string" ? t : undefined;
}

export function sampleValue(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 4) return null;
  if ("default" in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (firstType(schema)) {
    case "string":
      return "";
    case "number":
    case "integer":
      return 0;
    case "boolean":
      return false;
    case "array":
      return [];
    case "object":
      return sampleArgs(schema, depth + 1);
    default:
      return null;
  }
}

/** Required properties only (plus those with defaults), so the sample passes validation when filled in. */
export function sampleArgs(schema: unknown, depth = 0): Record<string, unknown> {
  const s = (schema ?? {}) as Schema;
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(props)) {
    if (required.has(name)) out[name] = sampleValue(prop, depth);
  }
  return out;
}
