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
import { isRecord, pyTypeOf, typeOf } from "./legacy-param-types";
import { isValidToolsetName } from "./names";
import {
  QUERY_METHODS,
  renderDoc,
  renderPythonSource,
  renderSource,
  type SourceInput,
} from "./render-migrated-api";
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
  const sourceInput: SourceInput = {
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
    source: python ? renderPythonSource(sourceInput) : renderSource(sourceInput),
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
