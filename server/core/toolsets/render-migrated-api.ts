/**
 * The files a migrated legacy API becomes: `toolset.ts` (the sandbox's `fetch`) or `toolset.py`
 * (httpx), each calling the endpoint with query string or JSON body, and a `doc.md` with the
 * parameter table, an example call and the configuration it reads.
 */
import type { Category } from "../capabilities/types";
import { pyLiteral } from "./legacy-param-types";
import type { LegacyApiParameter } from "./migrate-api";

/** Methods whose parameters travel in the query string; the others send a JSON body. */
export const QUERY_METHODS = new Set(["GET", "HEAD", "DELETE"]);

/** Text safe inside a Python docstring, on one line. */
function docText(text: string): string {
  return text
    .replace(/\\/g, "\\\\")
    .replace(/"""/g, '\\"\\"\\"')
    .replace(/\s*\n\s*/g, " ")
    .trim();
}

export function renderPythonSource(s: SourceInput): string {
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

export interface SourceInput {
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

export function renderSource(s: SourceInput): string {
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

export function renderDoc(d: DocInput): string {
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
