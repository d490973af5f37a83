/**
 * Turns a legacy API tool definition `{ name, type: "api", endpoint, method, parameters }` into the
 * two files of a toolset: `toolset.ts` performs the HTTP call with the sandbox's `fetch` (query string
 * for GET/HEAD/DELETE, JSON body otherwise) and `doc.md` is generated from the parameters.
 *
 * `parameters` may be JSON-Schema-like `{ type: "object", properties, required }` or an array of
 * `{ name, type, description, required, enum?, default? }`. Anything else is refused with a reason.
 */
import { CATEGORIES, type Category } from "../capabilities/types";
import { AppError } from "../errors";
import { isValidToolsetName } from "./names";
import type { ToolsetFiles } from "./types";

export interface LegacyApiParameter {
  /** Name on the wire (query key, body key or `{placeholder}` in the endpoint). */
  wireName: string;
  /** TypeScript parameter name (the wire name made a valid identifier). */
  name: string;
  typeText: string;
  description: string;
  required: boolean;
  defaultValue?: unknown;
  integer: boolean;
}

export interface MigratedApi {
  /** Toolset (folder) name. */
  name: string;
  /** Binding (function) name. */
  binding: string;
  category: Category;
  method: string;
  endpoint: string;
  parameters: LegacyApiParameter[];
  files: ToolsetFiles;
  /** Things the user should know: renamed parameters, widened types. */
  notes: string[];
}

export interface MigrateOptions {
  /** Toolset name; default derived from the definition's name. */
  name?: string;
  /** Default: `external` for GET/HEAD, `write` for methods that change state. */
  category?: Category;
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;
const QUERY_METHODS = new Set(["GET", "HEAD", "DELETE"]);
const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if import in instanceof new null return super switch this throw true try typeof var void while with " +
    "yield let static implements interface package private protected public await arguments eval env fetch console " +
    "undefined NaN Infinity"
  ).split(" "),
);

function bad(message: string): never {
  throw new AppError("BAD_INPUT", `legacy API definition: ${message}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `Get Weather!` -> `get_weather`; a leading digit gets a prefix. */
export function toIdentifier(raw: string): string {
  let id = raw
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .replace(/_+/g, "_");
  if (!id) id = "call";
  if (/^[0-9]/.test(id)) id = `api_${id}`;
  if (RESERVED.has(id)) id = `${id}_`;
  return id;
}

export function migrateLegacyApi(definition: unknown, options: MigrateOptions = {}): MigratedApi {
  if (!isRecord(definition))
    bad('expected a JSON object `{ name, type: "api", endpoint, method, parameters }`');
  const { name, type, endpoint, method } = definition;
  if (type !== "api")
    bad(`\`type\` must be "api", got ${JSON.stringify(type)}; only API definitions can be migrated`);
  if (typeof name !== "string" || !name.trim()) bad("`name` must be a non-empty string");
  if (typeof endpoint !== "string")
    bad('`endpoint` must be a URL string such as "https://api.example.com/v1/items"');
  let url: URL;
  try {
    url = new URL(endpoint.replace(/\{(\w+)\}/g, "__$1__"));
  } catch {
    bad(`\`endpoint\` is not an absolute URL: ${JSON.stringify(endpoint)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    bad(`\`endpoint\` must be http or https, got ${url.protocol}`);
  const verb = typeof method === "string" ? method.toUpperCase() : "";
  if (!(METHODS as readonly string[]).includes(verb)) {
    bad(`\`method\` must be one of ${METHODS.join(", ")}, got ${JSON.stringify(method)}`);
  }
  if (options.category !== undefined && !(CATEGORIES as readonly string[]).includes(options.category)) {
    bad(`category must be one of ${CATEGORIES.join(", ")}`);
  }
  const description =
    typeof definition.description === "string" && definition.description.trim()
      ? definition.description.trim()
      : `Calls ${verb} ${endpoint}.`;

  const notes: string[] = [];
  const binding = toIdentifier(name);
  const toolsetName = options.name ?? binding;
  if (!isValidToolsetName(toolsetName)) {
    bad(
      `toolset name ${JSON.stringify(toolsetName)} is not valid; pass --name with lower-case letters, digits, - and _`,
    );
  }
  const parameters = readParameters(definition.parameters, notes);
  // Endpoint placeholders `{id}` or `:id` are filled from parameters of the same name.
  const path =
    `${url.pathname.replace(/__(\w+)__/g, "{$1}")}${url.search.replace(/__(\w+)__/g, "{$1}")}`.replace(
      /\/:([A-Za-z_]\w*)/g,
      "/{$1}",
    );
  const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  for (const p of pathParams) {
    const param = parameters.find((x) => x.wireName === p);
    if (!param) bad(`endpoint placeholder {${p}} has no parameter of that name`);
    if (!param.required) {
      param.required = true;
      notes.push(`parameter \`${p}\` fills {${p}} in the endpoint, so it is required`);
    }
  }
  const category = options.category ?? (QUERY_METHODS.has(verb) && verb !== "DELETE" ? "external" : "write");
  const origin = `${url.protocol}//${url.host}`;
  const files = {
    source: renderSource({
      description,
      binding,
      category,
      verb,
      origin,
      host: url.host,
      path,
      pathParams,
      parameters,
      name,
    }),
    doc: renderDoc({ description, binding, toolsetName, category, verb, endpoint, origin, parameters }),
  };
  return {
    name: toolsetName,
    binding,
    category,
    method: verb,
    endpoint,
    parameters,
    files,
    notes,
  };
}

function readParameters(raw: unknown, notes: string[]): LegacyApiParameter[] {
  let list: { wireName: string; spec: Record<string, unknown>; required: boolean }[];
  if (raw === undefined || raw === null) {
    list = [];
  } else if (Array.isArray(raw)) {
    list = raw.map((p, i) => {
      if (!isRecord(p) || typeof p.name !== "string" || !p.name) {
        bad(`parameters[${i}] must be an object with a string \`name\``);
      }
      return { wireName: p.name, spec: p, required: p.required === true };
    });
  } else if (isRecord(raw) && (raw.type === "object" || raw.type === undefined) && isRecord(raw.properties)) {
    const required = raw.required === undefined ? [] : raw.required;
    if (!Array.isArray(required) || !required.every((r) => typeof r === "string")) {
      bad("parameters.required must be an array of property names");
    }
    list = Object.entries(raw.properties).map(([wireName, spec]) => {
      if (!isRecord(spec)) bad(`parameters.properties.${wireName} must be an object`);
      return { wireName, spec, required: required.includes(wireName) };
    });
    for (const r of required) {
      if (!list.some((p) => p.wireName === r))
        bad(`parameters.required names "${r}", which is not a property`);
    }
  } else {
    bad(
      '`parameters` must be a JSON Schema object `{ type: "object", properties: {...}, required: [...] }` ' +
        "or an array of `{ name, type, description, required }`",
    );
  }
  const used = new Set<string>();
  return list.map(({ wireName, spec, required }) => {
    let id = toIdentifier(wireName);
    if (/^[A-Za-z_$][\w$]*$/.test(wireName) && !RESERVED.has(wireName)) id = wireName;
    while (used.has(id)) id = `${id}_`;
    used.add(id);
    if (id !== wireName)
      notes.push(`parameter \`${wireName}\` is \`${id}\` in toolset.ts (sent as \`${wireName}\`)`);
    const typeText = typeOf(spec, `parameter \`${wireName}\``, notes);
    const param: LegacyApiParameter = {
      wireName,
      name: id,
      typeText,
      description: typeof spec.description === "string" ? spec.description.trim() : "",
      required,
      integer: spec.type === "integer",
    };
    if (spec.default !== undefined && !required) param.defaultValue = spec.default;
    return param;
  });
}

function typeOf(spec: Record<string, unknown>, where: string, notes: string[], depth = 0): string {
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

/** Text safe inside a `/** ... *\/` comment, on one line. */
function commentText(text: string): string {
  return text
    .replace(/\*\//g, "* /")
    .replace(/\s*\n\s*/g, " ")
    .trim();
}

interface SourceInput {
  description: string;
  binding: string;
  category: Category;
  verb: string;
  origin: string;
  host: string;
  path: string;
  pathParams: string[];
  parameters: LegacyApiParameter[];
  name: string;
}

function renderSource(s: SourceInput): string {
  const ordered = [...s.parameters.filter((p) => p.required), ...s.parameters.filter((p) => !p.required)];
  const signature = ordered
    .map((p) => {
      if (p.defaultValue !== undefined) return `${p.name}: ${p.typeText} = ${JSON.stringify(p.defaultValue)}`;
      return `${p.name}${p.required ? "" : "?"}: ${p.typeText}`;
    })
    .join(", ");
  const paramTags = ordered
    .filter((p) => p.description)
    .map((p) => ` * @param ${p.name} ${commentText(p.description)}\n`)
    .join("");
  const checks = ordered
    .filter((p) => p.integer)
    .map(
      (p) =>
        `  if (${p.name} !== undefined && !Number.isInteger(${p.name})) throw new Error("${p.name} must be a whole number");\n`,
    )
    .join("");
  const args = ordered.map((p) => `${JSON.stringify(p.wireName)}: ${p.name}`).join(", ");
  const sendsQuery = QUERY_METHODS.has(s.verb);
  return `/**
 * ${commentText(s.description)}
 * Migrated from the legacy API definition "${commentText(s.name)}" (${s.verb} ${s.origin}${commentText(s.path)}).
 * @hosts ${s.host}
 * @env BASE_URL Base URL of the API; default ${s.origin}
 * @secret API_KEY Optional; sent as "Authorization: Bearer <API_KEY>" when set
 */

const DEFAULT_BASE_URL = ${JSON.stringify(s.origin)};
const METHOD = ${JSON.stringify(s.verb)};
const PATH = ${JSON.stringify(s.path)};
const PATH_PARAMS: string[] = ${JSON.stringify(s.pathParams)};
const SEND_AS_QUERY = ${sendsQuery};

/**
 * ${commentText(s.description)}
 * @tool ${s.category}
${paramTags} */
export async function ${s.binding}(${signature}): Promise<unknown> {
${checks}  return callApi({ ${args} });
}

/** Performs the request; a non-2xx answer throws with the status and the start of the body. */
async function callApi(args: Record<string, unknown>): Promise<unknown> {
  const base = (env.BASE_URL ?? DEFAULT_BASE_URL).replace(/\\/+$/, "");
  let path = PATH;
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined) continue;
    if (PATH_PARAMS.includes(key)) path = path.split(\`{\${key}}\`).join(encodeURIComponent(String(value)));
    else rest[key] = value;
  }
  const headers: Record<string, string> = { accept: "application/json" };
  if (env.API_KEY) headers.authorization = \`Bearer \${env.API_KEY}\`;
  let url = base + path;
  let body: string | undefined;
  if (SEND_AS_QUERY) {
    const query = toQuery(rest);
    if (query) url += (url.includes("?") ? "&" : "?") + query;
  } else {
    headers["content-type"] = "application/json";
    body = JSON.stringify(rest);
  }
  const response = await fetch(url, { method: METHOD, headers, body });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(\`\${METHOD} \${path} failed with HTTP \${response.status}: \${text.slice(0, 500)}\`);
  }
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Arrays repeat the key; objects travel as JSON text. */
function toQuery(params: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      const text = typeof v === "object" && v !== null ? JSON.stringify(v) : String(v);
      parts.push(\`\${encodeURIComponent(key)}=\${encodeURIComponent(text)}\`);
    }
  }
  return parts.join("&");
}
`;
}

interface DocInput {
  description: string;
  binding: string;
  toolsetName: string;
  category: Category;
  verb: string;
  endpoint: string;
  origin: string;
  parameters: LegacyApiParameter[];
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");
}

function renderDoc(d: DocInput): string {
  const rows = d.parameters.map((p) => {
    const required = p.required
      ? "yes"
      : p.defaultValue !== undefined
        ? `no (default \`${JSON.stringify(p.defaultValue)}\`)`
        : "no";
    return `| \`${p.name}\` | \`${cell(p.typeText)}\` | ${required} | ${cell(p.description || "")} |`;
  });
  const table = rows.length
    ? `| parameter | type | required | description |\n|---|---|---|---|\n${rows.join("\n")}\n`
    : "It takes no parameters.\n";
  const example = d.parameters
    .filter((p) => p.required)
    .map((p) => `${p.name}: ${exampleValue(p.typeText)}`)
    .join(", ");
  return `# ${d.toolsetName}

${d.description}

Migrated from a legacy API definition: \`${d.verb} ${d.endpoint}\`.

## \`${d.binding}\` (${d.category})

${d.description}

${table}
${QUERY_METHODS.has(d.verb) ? "Parameters travel in the query string." : "Parameters travel as a JSON body."} Returns the API's JSON response (its text when the response is not JSON, \`null\` when it is empty). A response that is not 2xx raises an error with the HTTP status and the start of the body.

\`\`\`js
import { ${d.binding} } from "toolstore/${d.toolsetName}";
const result = await ${d.binding}({ ${example} });
\`\`\`

## Configuration (console)

- \`BASE_URL\` (optional): base URL of the API, default \`${d.origin}\`. Its host must be in the toolset's allowed hosts.
- \`API_KEY\` (optional secret): sent as \`Authorization: Bearer <API_KEY>\`.
`;
}

function exampleValue(typeText: string): string {
  if (typeText === "string") return '"..."';
  if (typeText === "number") return "1";
  if (typeText === "boolean") return "true";
  if (typeText.endsWith("[]")) return "[]";
  if (typeText.startsWith('"') || /^-?\d/.test(typeText)) return typeText.split(" | ")[0] as string;
  return "{}";
}
