/**
 * Reading stored toolset rows back into core shapes: the JSON columns (bindings, allowedHosts)
 * and the header declarations, which are re-parsed from the stored source (cheap, never run).
 */

import { CATEGORIES, type Category } from "../../core/capabilities/types";
import { AppError } from "../../core/errors";
import { looksLikePythonToolset, pythonDeclarations } from "../../core/python/parse-python";
import {
  parseToolsetSource,
  type ToolsetBinding,
  type ToolsetDeclarations,
  type ToolsetLanguage,
  type ToolsetVersionView,
} from "../../core/toolsets";

export function parseJsonArray<T>(text: string, what: string): T[] {
  try {
    const value: unknown = JSON.parse(text);
    if (Array.isArray(value)) return value as T[];
  } catch {
    // fall through
  }
  throw new AppError("INTERNAL", `stored ${what} is not a JSON array`);
}

export function parseBindings(text: string): ToolsetBinding[] {
  return parseJsonArray<ToolsetBinding>(text, "bindings");
}

export function parseHosts(text: string): string[] {
  return parseJsonArray<string>(text, "allowedHosts").filter((h) => typeof h === "string");
}

/** The stored `language` column as a language (rows from before the column are typescript). */
export function storedLanguage(value: string): ToolsetLanguage {
  return value === "python" ? "python" : "typescript";
}

/** Header declarations of stored code; without a language, it is guessed from the code. */
export function declarationsOf(source: string, language?: ToolsetLanguage): ToolsetDeclarations {
  // toolset.py keeps its declarations in the module docstring (no Python needed to read them).
  const python = language ? language === "python" : looksLikePythonToolset(source);
  if (python) return pythonDeclarations(source);
  return parseToolsetSource(source).declarations;
}

export function asCategory(value: string): Category {
  if (!(CATEGORIES as readonly string[]).includes(value))
    throw new AppError("INTERNAL", `stored category "${value}" is unknown`);
  return value as Category;
}

export interface StoredVersion {
  contentHash: string;
  doc: string;
  source: string;
  bindings: string;
  language: string;
}

export function versionView(row: StoredVersion): ToolsetVersionView {
  const language = storedLanguage(row.language);
  return {
    contentHash: row.contentHash,
    doc: row.doc,
    source: row.source,
    language,
    bindings: parseBindings(row.bindings),
    declarations: declarationsOf(row.source, language),
  };
}
