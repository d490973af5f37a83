/**
 * Turns a legacy docker tool `{ name, type: "docker", code, function }` (code as base64 or plain
 * text) into a Python toolset: `toolset.py` is the code with `from toolstore.toolset import tool`
 * added and `@tool` put on the named function (its one binding; the schema comes from its
 * signature), and `doc.md` is generated from what Python's ast reads of it. Nothing of the code runs.
 */
import { CATEGORIES, type Category } from "../capabilities/types";
import { AppError } from "../errors";
import { toIdentifier } from "../toolsets/migrate-api";
import { isValidToolsetName } from "../toolsets/names";
import type { ToolsetBinding, ToolsetFiles } from "../toolsets/types";
import { type ToolsetValidation, validateToolsetFiles } from "../toolsets/validate-toolset";
import type { PythonParser } from "./parse-python";

export interface MigrateDockerOptions {
  parsePython: PythonParser;
  /** Toolset name; default derived from the definition's name. */
  name?: string;
  /** Written as @tool(category=...); default: a bare @tool (pending until an admin sets it). */
  category?: Category;
}

export interface MigratedDocker {
  name: string;
  binding: string;
  category?: Category;
  /** Whether `code` was base64. */
  decoded: boolean;
  files: ToolsetFiles & { language: "python" };
  validation: ToolsetValidation;
  /** What the user must still do. */
  todo: string[];
}

function bad(message: string): never {
  throw new AppError("BAD_INPUT", `legacy docker definition: ${message}`);
}

const BASE64 = /^[A-Za-z0-9+/\s]+={0,2}\s*$/;

/** Base64 when it decodes to readable UTF-8 text that round-trips; otherwise the text itself. */
export function decodeDockerCode(code: string): { text: string; decoded: boolean } {
  const compact = code.replace(/\s+/g, "");
  if (compact.length >= 8 && compact.length % 4 === 0 && BASE64.test(code)) {
    const buffer = Buffer.from(compact, "base64");
    const text = buffer.toString("utf8");
    const printable = ![...text].some((ch) => {
      const c = ch.codePointAt(0) ?? 0;
      return (c < 32 && c !== 9 && c !== 10 && c !== 13) || c === 0xfffd;
    });
    if (printable && buffer.toString("base64") === compact && /\S/.test(text)) return { text, decoded: true };
  }
  return { text: code, decoded: false };
}

/** The code with the import added (after a module docstring and __future__ imports) and @tool on `fn`. */
export function markBinding(code: string, fn: string, category?: Category): string {
  const lines = code.replace(/\r\n?/g, "\n").split("\n");
  const def = new RegExp(`^(async\\s+)?def\\s+${fn}\\s*\\(`);
  const at = lines.findIndex((l) => def.test(l));
  if (at < 0) bad(`the code has no top-level \`def ${fn}(...)\` (the definition's "function")`);
  let decoratorAt = at;
  while (decoratorAt > 0 && /^@/.test(lines[decoratorAt - 1] ?? "")) decoratorAt--;
  lines.splice(decoratorAt, 0, category ? `@tool(category="${category}")` : "@tool");
  let insertAt = 0;
  const first = lines[0]?.trimStart() ?? "";
  const quote = first.startsWith('"""') ? '"""' : first.startsWith("'''") ? "'''" : undefined;
  if (quote) {
    const rest = first.slice(3);
    if (rest.includes(quote)) insertAt = 1;
    else {
      const end = lines.findIndex((l, i) => i > 0 && l.includes(quote));
      insertAt = end < 0 ? 0 : end + 1;
    }
  }
  while (/^from\s+__future__\s+import/.test(lines[insertAt] ?? "")) insertAt++;
  lines.splice(insertAt, 0, "from toolstore.toolset import tool", "");
  const text = lines.join("\n");
  return text.endsWith("\n") ? text : `${text}\n`;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");
}

function typeLabel(schema: Record<string, unknown>): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" / ");
  if (typeof schema.type === "string") return schema.type;
  if (Array.isArray(schema.type)) return schema.type.join(" or ");
  return "any";
}

export function renderDockerDoc(
  name: string,
  source: string,
  binding: ToolsetBinding,
  category?: Category,
): string {
  const properties = (binding.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = (binding.inputSchema.required ?? []) as string[];
  const rows = binding.params.map((p) => {
    const s = properties[p] ?? {};
    const req = required.includes(p) ? "yes" : `no (default \`${JSON.stringify(s.default ?? null)}\`)`;
    return `| \`${p}\` | ${cell(typeLabel(s))} | ${req} | ${cell(String(s.description ?? ""))} |`;
  });
  const table = rows.length
    ? `| parameter | type | required | description |\n|---|---|---|---|\n${rows.join("\n")}\n`
    : "It takes no parameters.\n";
  const example = binding.params
    .filter((p) => required.includes(p))
    .map((p) => `${p}: ${typeLabel(properties[p] ?? {}) === "string" ? '"..."' : "1"}`)
    .join(", ");
  return `# ${name}

${binding.description || `Migrated from the legacy docker tool "${name}".`}

Migrated from a legacy docker tool: the Python code now runs as a toolset (\`toolset.py\`).

## \`${binding.name}\` (${category ?? "category pending"})

\`${binding.signature}\`

${table}
Returns what \`${binding.name}\` returns, as JSON.

\`\`\`js
import { ${binding.name} } from "toolstore/${name}";
const result = await ${binding.name}({ ${example} });
\`\`\`

Or: \`store.execute({ tool_name: "${name}", arguments: { ${example} } })\` (\`function\` may be left out: it is the only binding).
${source.includes("httpx") || source.includes("urllib") || source.includes("requests") ? "\nThe code makes HTTP requests: the hosts it reaches must be in the toolset's allowed hosts.\n" : ""}`;
}

export async function migrateLegacyDocker(
  definition: unknown,
  options: MigrateDockerOptions,
): Promise<MigratedDocker> {
  if (typeof definition !== "object" || definition === null || Array.isArray(definition)) {
    bad('expected a JSON object `{ name, type: "docker", code, function }`');
  }
  const d = definition as Record<string, unknown>;
  if (d.type !== "docker") bad(`\`type\` must be "docker", got ${JSON.stringify(d.type)}`);
  if (typeof d.name !== "string" || !d.name.trim()) bad("`name` must be a non-empty string");
  if (typeof d.code !== "string" || !d.code.trim()) bad("`code` must be the Python source (plain or base64)");
  const fn = typeof d.function === "string" && d.function ? d.function : "main";
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(fn))
    bad(`\`function\` must be a Python function name, got ${JSON.stringify(fn)}`);
  if (options.category !== undefined && !(CATEGORIES as readonly string[]).includes(options.category)) {
    bad(`category must be one of ${CATEGORIES.join(", ")}`);
  }
  const name = options.name ?? toIdentifier(d.name);
  if (!isValidToolsetName(name)) {
    bad(
      `toolset name ${JSON.stringify(name)} is not valid; pass --name with lower-case letters, digits, - and _`,
    );
  }
  const { text, decoded } = decodeDockerCode(d.code);
  const source = markBinding(text, fn, options.category);
  const parsed = await options.parsePython(source);
  const binding = parsed.bindings.find((b) => b.name === fn);
  const doc = binding
    ? renderDockerDoc(name, source, binding, options.category)
    : `# ${name}\n\nMigrated from a legacy docker tool.\n\n## \`${fn}\`\n`;
  const files = { doc, source, language: "python" as const };
  const validation = await validateToolsetFiles({ name, files }, { parsePython: options.parsePython });
  const todo: string[] = [];
  if (!options.category) {
    todo.push(
      `set a category for ${name}.${fn}: it is pending (asked like execute) until an admin sets it in the console, or write @tool(category="read") in toolset.py (or pass --category)`,
    );
  }
  const untyped = binding?.params.filter((p) => {
    const s = (binding.inputSchema.properties as Record<string, Record<string, unknown>> | undefined)?.[p];
    return !s || Object.keys(s).filter((k) => k !== "default" && k !== "description").length === 0;
  });
  if (untyped && untyped.length > 0) {
    todo.push(
      `add type hints to ${untyped.map((p) => `\`${p}\``).join(", ")} in toolset.py so agents see their types`,
    );
  }
  if (/\bhttpx\b|\brequests\b|\burllib\b/.test(source)) {
    todo.push(
      "the code makes HTTP requests: declare its hosts with @hosts in a module docstring, or set them in the console",
    );
  }
  return {
    name,
    binding: fn,
    ...(options.category ? { category: options.category } : {}),
    decoded,
    files,
    validation,
    todo,
  };
}
