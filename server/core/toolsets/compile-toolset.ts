/**
 * Turns valid toolset files into what a version stores: ES module JavaScript from the real
 * TypeScript transpiler, the bindings, and the content hash that grants and allow rules bind to.
 */
import { createHash } from "node:crypto";
import ts from "typescript";
import { AppError } from "../errors";
import type { CompiledToolset, ToolsetFiles } from "./types";
import type { ToolsetInput, ToolsetValidation, ValidateOptions } from "./validate-toolset";
import { formatDiagnostic, validateToolset, validateToolsetFiles } from "./validate-toolset";

const CONTENT_HASH_FORMAT = "toolstore-toolset/1";

function normalize(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/**
 * sha256 (hex) of the canonical form of doc + source: line endings normalized, fields in a fixed
 * order with a format tag. Any change of code or doc is a new version hash.
 */
export function computeContentHash(files: ToolsetFiles): string {
  const canonical = JSON.stringify({
    doc: normalize(files.doc),
    format: CONTENT_HASH_FORMAT,
    // Only Python adds a field, so every TypeScript version keeps the hash it always had.
    ...(files.language === "python" ? { language: "python" } : {}),
    source: normalize(files.source),
  });
  return createHash("sha256").update(canonical, "utf8").digest("hex");
}

/** `ts.transpileModule` to an ES module; types are erased, nothing is bundled. */
export function transpileToolset(source: string): string {
  const out = ts.transpileModule(normalize(source), {
    fileName: "toolset.ts",
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      isolatedModules: true,
      removeComments: false,
      sourceMap: false,
    },
  });
  return out.outputText;
}

/**
 * Validates and compiles. Throws AppError TOOLSET_INVALID (details: { errors, warnings }) when the
 * toolset has errors; warnings ride along in the result.
 */
export function compileToolset(
  input: ToolsetInput & { files: ToolsetFiles },
  options: ValidateOptions = {},
): CompiledToolset {
  return compiledFrom(input, validateToolset(input, options));
}

/** Either language: toolset.py is parsed by `options.parsePython` and stored as its source. */
export async function compileToolsetFiles(
  input: ToolsetInput & { files: ToolsetFiles },
  options: ValidateOptions = {},
): Promise<CompiledToolset> {
  return compiledFrom(input, await validateToolsetFiles(input, options));
}

function compiledFrom(
  input: ToolsetInput & { files: ToolsetFiles },
  validation: ToolsetValidation,
): CompiledToolset {
  if (!validation.ok || !validation.parsed) {
    const lines = validation.errors.map((d) => formatDiagnostic(d, input.name));
    throw new AppError("TOOLSET_INVALID", `toolset \`${input.name}\` is invalid:\n${lines.join("\n")}`, {
      details: { errors: validation.errors, warnings: validation.warnings },
    });
  }
  const { parsed } = validation;
  const language = input.files.language ?? "typescript";
  const files = { doc: normalize(input.files.doc), source: normalize(input.files.source), language };
  return {
    name: input.name,
    description: parsed.declarations.description || firstParagraph(files.doc),
    doc: files.doc,
    source: files.source,
    compiledJs: language === "python" ? files.source : transpileToolset(files.source),
    language,
    contentHash: computeContentHash(files),
    bindings: parsed.bindings,
    declarations: parsed.declarations,
    warnings: validation.warnings,
  };
}

/** First prose paragraph of a Markdown doc, without headings; a fallback description. */
export function firstParagraph(doc: string): string {
  const paragraphs = doc.split(/\n\s*\n/).map((p) =>
    p
      .split("\n")
      .filter((line) => !line.trimStart().startsWith("#"))
      .join("\n")
      .trim(),
  );
  const prose = paragraphs.find((p) => p && !p.startsWith("```") && !p.startsWith("|") && !p.startsWith("-"));
  return (prose ?? "").replace(/\s+/g, " ").slice(0, 300);
}
