/**
 * Turns a legacy API tool definition `{ name, type: "api", endpoint, method, parameters }` into the
 * two files of a toolset: `toolset.ts` performs the HTTP call with the sandbox's `fetch` (query string
 * for GET/HEAD/DELETE, JSON body otherwise) and `doc.md` is generated from the parameters.
 *
 * `parameters` may be JSON-Schema-like `{ type: "object", properties, required }`, an array of
 * `{ name, type, description, required, enum?, default? }`, or the ToolStore plan's own map of name
 * -> `{ type, required, default, description }`. Anything else is refused with a reason.
 * `language: "python"` writes `toolset.py` (httpx, `@tool(category=...)`) instead of `toolset.ts`.
 */
import { CATEGORIES, type Category } from "../capabilities/types";
import { AppError } from "../errors";
import { isValidToolsetName } from "./names";
import type { ToolsetFiles, ToolsetLanguage } from "./types";

export interface LegacyApiParameter {
  /** Name on the wire (query key, body key or `{placeholder}` in the endpoint). */
  wireName: string;
  /** Parameter name in the code (the wire name made a valid identifier). */
  name: string;
  typeText: string;
  /** The same type as a Python hint. */
  pyType: string;
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
  /** Default typescript (toolset.ts); python writes toolset.py. */
  language?: ToolsetLanguage;
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;
const QUERY_METHODS = new Set(["GET", "HEAD", "DELETE"]);
const PY_RESERVED = new Set(
  (
    "False None True and as assert async await break class continue def del elif else except finally for from " +
    "global if import in is lambda nonlocal not or pass raise return try while with yield os httpx tool"
  ).split(" "),
);
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
  const python = options.language === "python";
  const parameters = readParameters(definition.parameters, notes, python);
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
  const sourceInput = {
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
  };
  const files: ToolsetFiles = {
    source: python
      ? renderPythonSource(sourceInput)
      : renderSource({
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
    doc: renderDoc({
      description,
      binding,
      toolsetName,
      category,
      verb,
      endpoint,
      origin,
      parameters,
      python,
    }),
    ...(python ? { language: "python" as const } : {}),
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

function readParameters(raw: unknown, notes: string[], python = false): LegacyApiParameter[] {
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
  } else if (isRecord(raw) && Object.keys(raw).length > 0 && Object.values(raw).every(isRecord)) {
    // The plan's form: { location: { type: "string", required: true }, units: { ..., default } }.
    list = Object.entries(raw).map(([wireName, spec]) => {
      const s = spec as Record<string, unknown>;
      if (s.required !== undefined && typeof s.required !== "boolean") {
        bad(`parameters.${wireName}.required must be true or false`);
      }
      return { wireName, spec: s, required: s.required === true };
    });
  } else {
    bad(
      '`parameters` must be a JSON Schema object `{ type: "object", properties: {...}, required: [...] }`, ' +
        "an array of `{ name, type, description, required }`, or a map of name to `{ type, required, default, description }`",
    );
  }
  const used = new Set<string>();
  return list.map(({ wireName, spec, required }) => {
    let id = toIdentifier(wireName);
    if (/^[A-Za-z_$][\w$]*$/.test(wireName) && !RESERVED.has(wireName)) id = wireName;
    if (python) {
      if (id.startsWith("_") || id.includes("$")) id = toIdentifier(id.replace(/\$/g, "_"));
      if (PY_RESERVED.has(id)) id = `${id}_`;
    }
    while (used.has(id)) id = `${id}_`;
    used.add(id);
    if (id !== wireName)
      notes.push(
        `parameter \`${wireName}\` is \`${id}\` in ${python ? "toolset.py" : "toolset.ts"} (sent as \`${wireName}\`)`,
      );
    const typeText = typeOf(spec, `parameter \`${wireName}\``, notes);
    const param: LegacyApiParameter = {
      wireName,
      name: id,
      typeText,
      pyType: pyTypeOf(spec),
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

/** The Python hint for a legacy parameter type (typing.Any where nothing narrower fits). */
function pyTypeOf(spec: Record<string, unknown>, depth = 0): string {
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

/** Text safe inside a Python docstring, on one line. */
function docText(text: string): string {
  return text
    .replace(/\\/g, "\\\\")
    .replace(/"""/g, '\\"\\"\\"')
    .replace(/\s*\n\s*/g, " ")
    .trim();
}

function renderPythonSource(s: SourceInput): string {
  const ordered = [...s.parameters.filter((p) => p.required), ...s.parameters.filter((p) => !p.required)];
  const signature = ordered
    .map((p) => {
      if (p.defaultValue !== undefined) return `${p.name}: ${p.pyType} = ${pyLiteral(p.defaultValue)}`;
      return p.required ? `${p.name}: ${p.pyType}` : `${p.name}: ${p.pyType} | None = None`;
    })
    .join(", ");
  const argDocs = ordered.filter((p) => p.description);
  const argsSection = argDocs.length
    ? `\n\n    Args:\n${argDocs.map((p) => `        ${p.name}: ${docText(p.description)}`).join("\n")}`
    : "";
  const checks = ordered
    .filter((p) => p.integer)
    .map(
      (p) =>
        `    if ${p.name} is not None and (isinstance(${p.name}, bool) or int(${p.name}) != ${p.name}):\n        raise ValueError("${p.name} must be a whole number")\n`,
    )
    .join("");
  const args = ordered.map((p) => `${JSON.stringify(p.wireName)}: ${p.name}`).join(", ");
  const typing = ["Any", ...(ordered.some((p) => p.pyType.includes("Literal[")) ? ["Literal"] : [])];
  return `"""${docText(s.description)}

Migrated from the legacy API definition "${docText(s.name)}" (${s.verb} ${s.origin}${docText(s.path)}).

@hosts ${s.host}
@env BASE_URL Base URL of the API; default ${s.origin}
@secret API_KEY Optional; sent as "Authorization: Bearer <API_KEY>" when set
"""
import os
from typing import ${typing.join(", ")}

import httpx
from toolstore.toolset import tool

DEFAULT_BASE_URL = ${JSON.stringify(s.origin)}
METHOD = ${JSON.stringify(s.verb)}
PATH = ${JSON.stringify(s.path)}
PATH_PARAMS: list[str] = ${JSON.stringify(s.pathParams)}
SEND_AS_QUERY = ${s.verb === "GET" || s.verb === "HEAD" || s.verb === "DELETE" ? "True" : "False"}


@tool(category="${s.category}")
def ${s.binding}(${signature}) -> Any:
    """${docText(s.description)}${argsSection}
    """
${checks}    return _call_api({${args}})


def _call_api(args: dict[str, Any]) -> Any:
    """Performs the request; a non-2xx answer raises with the status and the start of the body."""
    base = (os.environ.get("BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    path = PATH
    rest: dict[str, Any] = {}
    for key, value in args.items():
        if value is None:
            continue
        if key in PATH_PARAMS:
            from urllib.parse import quote

            path = path.replace("{" + key + "}", quote(str(value), safe=""))
        else:
            rest[key] = value
    headers = {"accept": "application/json"}
    if os.environ.get("API_KEY"):
        headers["authorization"] = "Bearer " + os.environ["API_KEY"]
    if SEND_AS_QUERY:
        resp = httpx.request(METHOD, base + path, params=rest, headers=headers)
    else:
        resp = httpx.request(METHOD, base + path, json=rest, headers=headers)
    if resp.status_code >= 400:
        raise RuntimeError(f"{METHOD} {path} failed with HTTP {resp.status_code}: {resp.text[:500]}")
    if not resp.text:
        return None
    try:
        return resp.json()
    except ValueError:
        return resp.text
`;
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
  python?: boolean;
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
    const type = d.python ? p.pyType : p.typeText;
    return `| \`${p.name}\` | \`${cell(type)}\` | ${required} | ${cell(p.description || "")} |`;
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
