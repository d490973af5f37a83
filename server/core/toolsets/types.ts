/**
 * Shapes of a toolset as the core sees it: the two files, what parsing finds in them, and what a
 * published version stores. Types only; behaviour lives in the sibling modules.
 */
import type { Category, JsonSchema, JsonValue } from "../capabilities/types";
import type { ToolsetLanguage } from "../sandbox/binding-runtime";
import type { SecretPlacement } from "../sandbox/secret-fill";

/** The two files of a toolset folder (or of an upload). */
export interface ToolsetFiles {
  /** Agent-facing documentation, `doc.md`. */
  doc: string;
  /** The code: `toolset.ts` (TypeScript) or `toolset.py` (Python). */
  source: string;
  /** Which file `source` is; default typescript. */
  language?: ToolsetLanguage;
}

export type DiagnosticSeverity = "error" | "warning";

/** One finding of validation, always tied to a file and, when it can be, a line. */
export interface ToolsetDiagnostic {
  severity: DiagnosticSeverity;
  /** `toolset.ts`, `doc.md`, or `.` for the folder itself. */
  file: string;
  /** 1-based; absent for folder-level findings. */
  line?: number;
  /** 1-based. */
  column?: number;
  message: string;
  /** What to write instead, when there is a clear fix. */
  hint?: string;
}

/** One exported, marked function of `toolset.ts`. Stored as JSON in `ToolsetVersion.bindings`. */
export interface ToolsetBinding {
  /** Function name = export name = `<toolset>.<name>` capability suffix. */
  name: string;
  description: string;
  category: Category;
  /**
   * toolset.py only: a bare `@tool` declared no category. The binding runs as `category`
   * (`execute`: asked in default mode, blocked in plan mode) until an admin sets one.
   */
  categoryPending?: boolean;
  /** JSON Schema of the one arguments object: `{ type: "object", properties, required }`. */
  inputSchema: JsonSchema;
  /** Parameter names in declaration order; arguments map to them by name. */
  params: string[];
  /** Human-readable TypeScript-like signature, for agents and diffs. */
  signature: string;
  /** Whether the function is `async` (the call is awaited either way). */
  async: boolean;
  /** 1-based line of the function in `toolset.ts`. */
  line: number;
}

/** An environment variable the code declares that it reads (`@env` / `@secret`). */
export interface ToolsetEnvDeclaration {
  name: string;
  secret: boolean;
  description: string;
  /** Where a secret's value may go in a request (`@secret NAME header body`); absent: headers only. */
  placements?: SecretPlacement[];
}

/** Defaults declared in the header comment of `toolset.ts`; the console's settings win. */
export interface ToolsetDeclarations {
  /** Host names `fetch` may reach (`@hosts`). */
  hosts: string[];
  /** Per-call timeout in milliseconds (`@timeout`), when declared. */
  timeoutMs?: number;
  env: ToolsetEnvDeclaration[];
  /** Text of the header comment, used as the toolset's one-line description. */
  description: string;
}

/** Result of parsing `toolset.ts` (never running it). */
export interface ParsedToolset {
  bindings: ToolsetBinding[];
  declarations: ToolsetDeclarations;
  diagnostics: ToolsetDiagnostic[];
}

/** What a published version holds; the sandbox runs `compiledJs`, never `source`. */
export interface CompiledToolset {
  name: string;
  description: string;
  doc: string;
  source: string;
  /** typescript: ES module JavaScript from `ts.transpileModule`; python: the source itself. */
  compiledJs: string;
  language: ToolsetLanguage;
  /** sha256 (hex) of the canonical doc + source; grants and allow rules bind to it. */
  contentHash: string;
  bindings: ToolsetBinding[];
  declarations: ToolsetDeclarations;
  /** Warnings found on the way (errors make compilation throw). */
  warnings: ToolsetDiagnostic[];
}

export type { Category, JsonSchema, JsonValue, ToolsetLanguage };
