/**
 * Validation of a toolset as a whole: the folder shape (exactly doc.md and toolset.ts), the doc, the
 * bindings and their types, and a type check of the code. Findings are values, never thrown.
 */
import { type PythonParser, toParsedToolset } from "../python/parse-python";
import { checkToolsetSyntax, checkToolsetTypes } from "./check-types";
import { isValidToolsetName, RESERVED_MODULE_NAMES } from "./names";
import { DOC_FILE, PYTHON_SOURCE_FILE, parseToolsetSource, SOURCE_FILE } from "./parse-toolset";
import type { ParsedToolset, ToolsetDiagnostic, ToolsetFiles } from "./types";

export interface ToolsetInput {
  /** Folder name = toolset name = module name. */
  name: string;
  /**
   * Names of the entries found in the folder (files and sub-folders). Leave out for an upload,
   * which is two files by construction.
   */
  entries?: string[];
  /** Contents; a missing file is `undefined`. */
  files: Partial<ToolsetFiles>;
}

export interface ToolsetValidation {
  ok: boolean;
  errors: ToolsetDiagnostic[];
  warnings: ToolsetDiagnostic[];
  /** Present when toolset.ts could be read (even with errors), for display. */
  parsed?: ParsedToolset;
}

export interface ValidateOptions {
  /** Run the TypeScript type checker too (default true; costs ~0.5 s the first time). */
  typecheck?: boolean;
  /** Parses toolset.py (Python's ast in a sandboxed worker); needed for a Python toolset. */
  parsePython?: PythonParser;
}

/** Folder-level findings: name, the files present, the doc. */
function folderFindings(input: ToolsetInput, found: ToolsetDiagnostic[]): void {
  const folder = (message: string, hint?: string) =>
    found.push({ severity: "error", file: ".", message, ...(hint ? { hint } : {}) });

  if (!isValidToolsetName(input.name)) {
    folder(
      `toolset name \`${input.name}\` is not valid`,
      "use lower-case letters, digits, `-` and `_`, starting with a letter (it becomes `toolstore/<name>`)",
    );
  }
  if (RESERVED_MODULE_NAMES.includes(input.name)) {
    folder(
      `toolset name \`${input.name}\` is taken by a built-in module (toolstore/${input.name})`,
      "rename the folder",
    );
  }
  const python = input.files.language === "python";
  const codeFile = python ? PYTHON_SOURCE_FILE : SOURCE_FILE;
  if (input.entries?.includes(SOURCE_FILE) && input.entries.includes(PYTHON_SOURCE_FILE)) {
    folder(
      `a toolset folder holds ${SOURCE_FILE} or ${PYTHON_SOURCE_FILE}, not both`,
      "keep one code file: the toolset is written in TypeScript or in Python",
    );
  } else if (input.entries) {
    const extra = input.entries.filter((e) => e !== DOC_FILE && e !== codeFile).sort();
    if (extra.length > 0) {
      folder(
        `a toolset folder holds exactly ${DOC_FILE} and ${codeFile}; also found: ${extra.join(", ")}`,
        `move tests and other files elsewhere (tests go under server/), and merge extra code into ${codeFile}`,
      );
    }
  }
  if (input.files.doc === undefined) {
    folder(`${DOC_FILE} is missing`, "write the agent-facing documentation in doc.md");
  } else if (input.files.doc.trim() === "") {
    found.push({
      severity: "error",
      file: DOC_FILE,
      line: 1,
      message: `${DOC_FILE} is empty`,
      hint: "describe what the toolset is for and how to call each function",
    });
  }
}

export function validateToolset(input: ToolsetInput, options: ValidateOptions = {}): ToolsetValidation {
  const found: ToolsetDiagnostic[] = [];
  const folder = (message: string, hint?: string) =>
    found.push({ severity: "error", file: ".", message, ...(hint ? { hint } : {}) });
  if (input.files.language === "python") {
    folder(
      "toolset.py needs the asynchronous validation (Python's ast runs in a sandboxed worker)",
      "call validateToolsetFiles with parsePython",
    );
    return finish(found);
  }
  folderFindings(input, found);
  if (input.files.source === undefined) {
    folder(`${SOURCE_FILE} is missing`, "write the code in toolset.ts");
    return finish(found);
  }

  const parsed = parseToolsetSource(input.files.source);
  found.push(...parsed.diagnostics);
  const checked = (options.typecheck === false ? checkToolsetSyntax : checkToolsetTypes)(input.files.source);
  // Where the parser already explained a type (e.g. an undeclared name), the checker's echo is noise.
  const explained = new Set(parsed.diagnostics.map((d) => `${d.line}:${d.column}`));
  found.push(...checked.filter((d) => !explained.has(`${d.line}:${d.column}`)));
  if (parsed.bindings.length === 0 && !parsed.diagnostics.some((d) => d.severity === "error")) {
    found.push({
      severity: "error",
      file: SOURCE_FILE,
      line: 1,
      message: "toolset.ts has no binding",
      hint: "mark at least one exported function with a doc comment holding `@tool <category>`",
    });
  }
  docMentions(input, parsed, found);
  return finish(dedupe(found), parsed);
}

/**
 * Validation of either language: toolset.ts synchronously, toolset.py through `parsePython`
 * (Python's own ast in a sandboxed worker; the file never runs).
 */
export async function validateToolsetFiles(
  input: ToolsetInput,
  options: ValidateOptions = {},
): Promise<ToolsetValidation> {
  if (input.files.language !== "python") return validateToolset(input, options);
  const found: ToolsetDiagnostic[] = [];
  folderFindings(input, found);
  if (input.files.source === undefined) return finish(found);
  if (!options.parsePython) {
    found.push({
      severity: "error",
      file: PYTHON_SOURCE_FILE,
      message: "this server has no Python runtime to read toolset.py with",
      hint: "install the pyodide package (npm install)",
    });
    return finish(found);
  }
  const parsed = toParsedToolset(await options.parsePython(input.files.source));
  found.push(...parsed.diagnostics);
  docMentions(input, parsed, found);
  return finish(dedupe(found), parsed);
}

function docMentions(input: ToolsetInput, parsed: ParsedToolset, found: ToolsetDiagnostic[]): void {
  const doc = input.files.doc;
  if (doc?.trim()) {
    for (const binding of parsed.bindings) {
      if (!new RegExp(`\\b${binding.name}\\b`).test(doc)) {
        found.push({
          severity: "warning",
          file: DOC_FILE,
          message: `${DOC_FILE} does not mention \`${binding.name}\``,
          hint: `document when to call \`${binding.name}\` and what it returns`,
        });
      }
    }
  }
}

function dedupe(found: ToolsetDiagnostic[]): ToolsetDiagnostic[] {
  const seen = new Set<string>();
  return found.filter((d) => {
    const key = `${d.file}:${d.line}:${d.column}:${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function finish(found: ToolsetDiagnostic[], parsed?: ParsedToolset): ToolsetValidation {
  const errors = found.filter((d) => d.severity === "error");
  const warnings = found.filter((d) => d.severity === "warning");
  return { ok: errors.length === 0, errors, warnings, ...(parsed ? { parsed } : {}) };
}

/** `toolsets/weather/toolset.ts:12:5: error: message\n    hint: ...` */
export function formatDiagnostic(d: ToolsetDiagnostic, folder?: string): string {
  const base = d.file === "." ? (folder ?? ".") : folder ? `${folder.replace(/\/$/, "")}/${d.file}` : d.file;
  const at = d.line === undefined ? base : `${base}:${d.line}${d.column === undefined ? "" : `:${d.column}`}`;
  return `${at}: ${d.severity}: ${d.message}${d.hint ? `\n    fix: ${d.hint}` : ""}`;
}
