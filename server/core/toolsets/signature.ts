/**
 * Renders a binding's input schema back as a short TypeScript-like signature, for agents (MCP tool
 * description, `info`) and for diffs: `get_weather({ location: string, unit?: "c" | "f" = "c" })`.
 */
import type { JsonSchema } from "./types";

export function schemaToTypeText(schema: JsonSchema): string {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).map(schemaToTypeText).join(" | ");
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  const type = schema.type;
  if (Array.isArray(type)) return type.map((t) => schemaToTypeText({ ...schema, type: t })).join(" | ");
  switch (type) {
    case "string":
    case "number":
    case "boolean":
    case "null":
      return type;
    case "integer":
      return "number";
    case "array": {
      const items = schemaToTypeText((schema.items as JsonSchema | undefined) ?? {});
      return /[ |]/.test(items) && !items.startsWith("{") ? `(${items})[]` : `${items}[]`;
    }
    case "object":
      return objectText(schema);
    default:
      return "unknown";
  }
}

function objectText(schema: JsonSchema, withDefaults = false): string {
  const properties = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const parts = Object.entries(properties).map(([key, value]) => {
    const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
    const def = withDefaults && value.default !== undefined ? ` = ${JSON.stringify(value.default)}` : "";
    return `${name}${required.has(key) ? "" : "?"}: ${schemaToTypeText(value)}${def}`;
  });
  const extra = schema.additionalProperties;
  if (extra && typeof extra === "object") {
    parts.push(`[key: string]: ${schemaToTypeText(extra as JsonSchema)}`);
  } else if (extra === undefined && parts.length === 0) {
    parts.push("[key: string]: unknown");
  }
  return parts.length === 0 ? "{}" : `{ ${parts.join(", ")} }`;
}

/** `name({ a: string, b?: number = 1 })`; the one argument is an object, as agents pass it. */
export function formatSignature(name: string, inputSchema: JsonSchema): string {
  const properties = (inputSchema.properties as Record<string, JsonSchema> | undefined) ?? {};
  if (Object.keys(properties).length === 0) return `${name}()`;
  return `${name}(${objectText(inputSchema, true)})`;
}
