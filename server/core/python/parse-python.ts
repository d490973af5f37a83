/**
 * `toolset.py` as the toolsets core sees it. The file is parsed by Python's own `ast` inside a
 * sandboxed Pyodide worker (see py/bootstrap.py, `_Parser`); nothing of it runs. This module turns
 * that parse into a ParsedToolset: bindings (function name, docstring, schema from the type hints
 * and defaults, category from `@tool(category=...)` / `@tool("...")`, pending for a bare `@tool`)
 * and the header declarations written as tags in the module docstring:
 *
 *   """Weather from a public API.
 *
 *   @hosts api.openweathermap.org
 *   @timeout 5000
 *   @secret OPENWEATHER_KEY query the API key (where it may go: header, body, query, path)
 *   """
 */
import type { Category, JsonSchema } from "../capabilities/types";
import { parseEnvTag } from "../toolsets/env-tag";
import {
  isValidEnvName,
  isValidHostPattern,
  PYTHON_SOURCE_FILE,
  TIMEOUT_MAX_MS,
  TIMEOUT_MIN_MS,
} from "../toolsets/parse-toolset";
import type {
  ParsedToolset,
  ToolsetBinding,
  ToolsetDeclarations,
  ToolsetDiagnostic,
} from "../toolsets/types";

/** What the worker's parser returns (JSON). */
export interface PythonParseOutput {
  bindings: (Omit<ToolsetBinding, "category"> & { category: Category; categoryPending: boolean })[];
  diagnostics: Omit<ToolsetDiagnostic, "file">[];
  moduleDoc: string;
  moduleDocLine: number;
  importsTool?: boolean;
}

/** Parses toolset.py (the python runtime's `parse`). */
export type PythonParser = (source: string) => Promise<PythonParseOutput>;

export function toParsedToolset(out: PythonParseOutput): ParsedToolset {
  const diagnostics: ToolsetDiagnostic[] = out.diagnostics.map((d) => ({ ...d, file: PYTHON_SOURCE_FILE }));
  const declarations = parsePythonHeader(out.moduleDoc, out.moduleDocLine, diagnostics);
  const bindings: ToolsetBinding[] = out.bindings.map((b) => ({
    name: b.name,
    description: b.description,
    category: b.category,
    ...(b.categoryPending ? { categoryPending: true } : {}),
    inputSchema: b.inputSchema as JsonSchema,
    params: b.params,
    signature: b.signature,
    async: false,
    line: b.line,
  }));
  if (bindings.length === 0 && !diagnostics.some((d) => d.severity === "error")) {
    diagnostics.push({
      severity: "error",
      file: PYTHON_SOURCE_FILE,
      line: 1,
      message: "toolset.py has no binding",
      hint: out.importsTool
        ? 'mark at least one top-level function with @tool(category="read")'
        : 'write `from toolstore.toolset import tool` and mark a function with @tool(category="read")',
    });
  }
  return { bindings, declarations, diagnostics };
}

/** `@hosts`, `@timeout`, `@env`, `@secret` lines of the module docstring; the rest is the description. */
export function parsePythonHeader(
  doc: string,
  firstLine: number,
  diagnostics: ToolsetDiagnostic[],
): ToolsetDeclarations {
  const declarations: ToolsetDeclarations = { hosts: [], env: [], description: "" };
  const prose: string[] = [];
  const lines = doc.split("\n");
  lines.forEach((raw, index) => {
    const line = raw.trim();
    const at = { file: PYTHON_SOURCE_FILE, line: firstLine + index };
    const report = (message: string, hint?: string) =>
      diagnostics.push({ severity: "error", ...at, message, ...(hint ? { hint } : {}) });
    const tag = /^@(hosts|timeout|env|secret)\b\s*(.*)$/.exec(line);
    if (!tag) {
      if (!line.startsWith("@")) prose.push(line);
      return;
    }
    const [, name, rest = ""] = tag;
    if (name === "hosts") {
      const hosts = rest.split(/[\s,]+/).filter(Boolean);
      if (hosts.length === 0) report("@hosts lists no host", "write `@hosts api.example.com, *.example.org`");
      for (const host of hosts) {
        const normal = host.toLowerCase();
        if (/^https?:\/\//.test(normal) || normal.includes("/")) {
          report(`@hosts takes host names, not URLs: \`${host}\``, "write e.g. `@hosts api.example.com`");
        } else if (!isValidHostPattern(normal)) {
          report(
            `@hosts: \`${host}\` is not a host name`,
            "write e.g. `api.example.com`, `*.example.com` or `localhost:8080`",
          );
        } else if (!declarations.hosts.includes(normal)) declarations.hosts.push(normal);
      }
    } else if (name === "timeout") {
      const ms = Number(rest.replace(/ms$/, "").trim());
      if (!/^\d+(ms)?$/.test(rest) || ms < TIMEOUT_MIN_MS || ms > TIMEOUT_MAX_MS) {
        report(
          `@timeout must be whole milliseconds between ${TIMEOUT_MIN_MS} and ${TIMEOUT_MAX_MS}, got \`${rest}\``,
          "write e.g. `@timeout 5000`",
        );
      } else declarations.timeoutMs = ms;
    } else {
      const entry = parseEnvTag(name === "secret" ? "secret" : "env", rest);
      const varName = entry.name;
      if (!isValidEnvName(varName)) {
        report(
          `@${name} needs an upper-case variable name, got \`${varName || "nothing"}\``,
          `write \`@${name} ${name === "secret" ? "API_KEY" : "BASE_URL"} what it is for\``,
        );
      } else if (declarations.env.some((e) => e.name === varName)) {
        report(`environment variable \`${varName}\` is declared twice`);
      } else {
        declarations.env.push(entry);
      }
    }
  });
  declarations.description =
    prose
      .join("\n")
      .split(/\n\s*\n/)[0]
      ?.replace(/\s+/g, " ")
      .trim() ?? "";
  return declarations;
}

const PY_TOOL_IMPORT = /^\s*(from\s+toolstore(\.toolset)?\s+import\b|import\s+toolstore\.toolset\b)/m;

/** Whether stored code is toolset.py (it imports toolstore.toolset, which toolset.ts cannot). */
export function looksLikePythonToolset(source: string): boolean {
  return PY_TOOL_IMPORT.test(source);
}

/** The header declarations of toolset.py from its module docstring, read without Python. */
export function pythonDeclarations(source: string): ToolsetDeclarations {
  const match = /^(?:\s*#[^\n]*\n|\s*\n)*\s*[rRuU]?("""|''')([\s\S]*?)\1/.exec(source);
  if (!match) return { hosts: [], env: [], description: "" };
  const before = source.slice(0, match.index + match[0].indexOf(match[1] ?? '"""'));
  const line = before.split("\n").length;
  const body = (match[2] ?? "").replace(/^\n/, "");
  const lines = body.split("\n");
  const indent = Math.min(
    ...lines
      .slice(1)
      .filter((l) => l.trim())
      .map((l) => l.length - l.trimStart().length),
    Number.POSITIVE_INFINITY,
  );
  const cleaned = lines
    .map((l, i) => (i > 0 && Number.isFinite(indent) ? l.slice(indent) : l))
    .join("\n")
    .trim();
  return parsePythonHeader(cleaned, line, []);
}
