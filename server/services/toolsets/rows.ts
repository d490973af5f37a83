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

export function declarationsOf(source: string): ToolsetDeclarations {
  // toolset.py keeps its declarations in the module docstring (no Python needed to read them).
  if (looksLikePythonToolset(source)) return pythonDeclarations(source);
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
}

export function versionView(row: StoredVersion): ToolsetVersionView {
  return {
    contentHash: row.contentHash,
    doc: row.doc,
    source: row.source,
    bindings: parseBindings(row.bindings),
    declarations: declarationsOf(row.source),
  };
}
