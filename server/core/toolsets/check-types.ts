/**
 * Type-checks `toolset.ts` against the ES2023 library and the toolset runtime globals only, in an
 * in-memory compiler host. This finds code that would fail in the sandbox (Node or DOM APIs, typos)
 * before it is published. Library files are parsed once per process.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { TOOLSET_GLOBALS_DTS, TOOLSET_GLOBALS_FILE } from "./runtime-globals";
import type { ToolsetDiagnostic } from "./types";

const ROOT = "/toolset/";
const SOURCE_PATH = `${ROOT}toolset.ts`;
const GLOBALS_PATH = `${ROOT}${TOOLSET_GLOBALS_FILE}`;

// Ask the compiler where its lib files are: require.resolve does not survive Next's bundler.
const libDir = path.dirname(ts.getDefaultLibFilePath({}));
const libCache = new Map<string, ts.SourceFile | undefined>();

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2023.d.ts"],
  types: [],
  strict: true,
  noEmit: true,
  isolatedModules: true,
  skipLibCheck: true,
  noFallthroughCasesInSwitch: true,
};

function libSourceFile(fileName: string): ts.SourceFile | undefined {
  const base = path.basename(fileName);
  if (!libCache.has(base)) {
    let file: ts.SourceFile | undefined;
    try {
      const text = readFileSync(path.join(libDir, base), "utf8");
      file = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, false);
    } catch {
      file = undefined;
    }
    libCache.set(base, file);
  }
  return libCache.get(base);
}

/** Syntax and type errors of `toolset.ts`, as diagnostics with line and column. */
export function checkToolsetTypes(source: string): ToolsetDiagnostic[] {
  const files = new Map<string, ts.SourceFile>([
    [SOURCE_PATH, ts.createSourceFile(SOURCE_PATH, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS)],
    [GLOBALS_PATH, ts.createSourceFile(GLOBALS_PATH, TOOLSET_GLOBALS_DTS, ts.ScriptTarget.ES2022, false)],
  ]);
  const host: ts.CompilerHost = {
    getSourceFile: (fileName) => files.get(fileName) ?? libSourceFile(fileName),
    getDefaultLibFileName: () => path.join(libDir, "lib.es2023.d.ts"),
    writeFile: () => {},
    getCurrentDirectory: () => ROOT,
    getCanonicalFileName: (f) => f,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => "\n",
    fileExists: (f) => files.has(f) || libSourceFile(f) !== undefined,
    readFile: () => undefined,
    getDirectories: () => [],
  };
  const program = ts.createProgram({ rootNames: [SOURCE_PATH, GLOBALS_PATH], options: OPTIONS, host });
  const sourceFile = program.getSourceFile(SOURCE_PATH) as ts.SourceFile;
  const found = [
    ...program.getSyntacticDiagnostics(sourceFile),
    ...program.getSemanticDiagnostics(sourceFile),
    ...program.getGlobalDiagnostics(),
  ];
  return found.map((d) => toDiagnostic(d));
}

/** Syntax errors only, without the type checker (fast). */
export function checkToolsetSyntax(source: string): ToolsetDiagnostic[] {
  const out = ts.transpileModule(source, {
    fileName: "toolset.ts",
    reportDiagnostics: true,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  });
  return (out.diagnostics ?? []).map((d) => toDiagnostic(d));
}

function toDiagnostic(d: ts.Diagnostic): ToolsetDiagnostic {
  let message = ts.flattenDiagnosticMessageText(d.messageText, "\n  ");
  // "Do you need to install type definitions for node?" misleads here: there is no Node in the sandbox.
  if (d.code === 2580 || d.code === 2591) message = message.replace(/\. Do you need.*$/s, ".");
  const out: ToolsetDiagnostic = {
    severity: d.category === ts.DiagnosticCategory.Warning ? "warning" : "error",
    file: "toolset.ts",
    message: `${message} (TS${d.code})`,
  };
  if (d.file && d.start !== undefined) {
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    out.line = line + 1;
    out.column = character + 1;
  }
  const hint = HINTS[d.code];
  if (
    hint &&
    /Cannot find name '(require|process|Buffer|setTimeout|setInterval|window|document|URL|URLSearchParams|TextEncoder|TextDecoder|atob|btoa|structuredClone)'/.test(
      message,
    )
  ) {
    out.hint = hint;
  }
  return out;
}

const HINTS: Record<number, string> = {
  2304: "toolset code runs in a sandbox with ES2023 built-ins plus `env`, `fetch` and `console` only; write the helper yourself in toolset.ts",
  2580: "toolset code runs in a sandbox with ES2023 built-ins plus `env`, `fetch` and `console` only; write the helper yourself in toolset.ts",
  2591: "toolset code runs in a sandbox with ES2023 built-ins plus `env`, `fetch` and `console` only; write the helper yourself in toolset.ts",
};
