/**
 * The types of a legacy API parameter as TypeScript and as Python hints, from its JSON-Schema-like
 * spec (`type`, `enum`, `items`, `properties`); whatever maps to nothing narrower is `unknown` / `Any`.
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The TypeScript type of a parameter; a type it cannot map becomes `unknown`, with a note. */
export function typeOf(spec: Record<string, unknown>, where: string, notes: string[], depth = 0): string {
  if (Array.isArray(spec.enum) && spec.enum.length > 0) {
    if (spec.enum.every((v) => typeof v === "string" || typeof v === "number" || typeof v === "boolean")) {
      return spec.enum.map((v) => JSON.stringify(v)).join(" | ");
    }
  }
  switch (spec.type) {
    case "string":
      return "string";
    case "number":
    case "integer":
    case "float":
      return "number";
    case "boolean":
    case "bool":
      return "boolean";
    case "array": {
      if (!isRecord(spec.items)) return "unknown[]";
      const items = typeOf(spec.items, `${where} (items)`, notes, depth + 1);
      return items.includes(" ") ? `(${items})[]` : `${items}[]`;
    }
    case "object": {
      if (!isRecord(spec.properties) || depth > 4) return "Record<string, unknown>";
      const required = Array.isArray(spec.required) ? spec.required : [];
      const fields = Object.entries(spec.properties).map(([key, value]) => {
        const safeKey = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
        const t = isRecord(value) ? typeOf(value, `${where}.${key}`, notes, depth + 1) : "unknown";
        return `${safeKey}${required.includes(key) ? "" : "?"}: ${t}`;
      });
      return fields.length ? `{ ${fields.join("; ")} }` : "Record<string, unknown>";
    }
    default:
      notes.push(
        `${where} has type ${JSON.stringify(spec.type ?? null)}, mapped to \`unknown\` (any JSON value)`,
      );
      return "unknown";
  }
}

/** The Python hint for a legacy parameter type (typing.Any where nothing narrower fits). */
export function pyTypeOf(spec: Record<string, unknown>, depth = 0): string {
  if (Array.isArray(spec.enum) && spec.enum.length > 0) {
    if (spec.enum.every((v) => typeof v === "string" || typeof v === "number" || typeof v === "boolean")) {
      return `Literal[${spec.enum.map((v) => pyLiteral(v)).join(", ")}]`;
    }
  }
  switch (spec.type) {
    case "string":
      return "str";
    case "integer":
      return "int";
    case "number":
    case "float":
      return "float";
    case "boolean":
    case "bool":
      return "bool";
    case "array":
      return isRecord(spec.items) && depth < 4 ? `list[${pyTypeOf(spec.items, depth + 1)}]` : "list[Any]";
    case "object":
      return "dict[str, Any]";
    default:
      return "Any";
  }
}

/** A JSON value as Python literal source. */
export function pyLiteral(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "None";
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pyLiteral).join(", ")}]`;
  if (isRecord(value))
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pyLiteral(v)}`)
      .join(", ")}}`;
  return "None";
}
