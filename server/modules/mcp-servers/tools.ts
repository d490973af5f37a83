/**
 * Upstream tools as module exports: export names that are JavaScript identifiers, collisions
 * reported (never merged), the pin hash over a tool's definition, and the category proposed from
 * its annotations. Pure functions; the database side is in servers.ts.
 */
import { canonicalJson, sha256Hex } from "../../core/capabilities/snapshot";
import type { Category } from "../../core/capabilities/types";

/** What the pin covers: a change to any of these sends the tool back to review. */
export interface UpstreamTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: Record<string, unknown>;
}

export function toolHash(tool: UpstreamTool): string {
  return sha256Hex(
    canonicalJson({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: tool.annotations,
    }),
  );
}

const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false " +
    "finally for function if import in instanceof new null return super switch this throw true try " +
    "typeof var void while with yield let static implements interface package private protected " +
    "public await arguments eval undefined NaN Infinity"
  ).split(" "),
);

/** `get-sum` -> `get_sum`, `a.b` -> `a_b`, `2fa` -> `_2fa`, `delete` -> `delete_`. */
export function exportNameFor(toolName: string): string {
  let name = toolName.replace(/[^A-Za-z0-9_$]/g, "_");
  if (name === "") name = "_";
  if (/^[0-9]/.test(name)) name = `_${name}`;
  if (RESERVED.has(name)) name = `${name}_`;
  return name;
}

export interface NamedTool {
  name: string;
  exportName: string;
  /** Set when another tool of the server maps to the same export name. */
  collision?: string;
}

/** Export names for a server's tools; tools that map to one name are all marked, none is kept. */
export function assignExportNames(toolNames: readonly string[]): NamedTool[] {
  const byExport = new Map<string, string[]>();
  for (const name of toolNames) {
    const exportName = exportNameFor(name);
    byExport.set(exportName, [...(byExport.get(exportName) ?? []), name]);
  }
  return toolNames.map((name) => {
    const exportName = exportNameFor(name);
    const same = byExport.get(exportName) ?? [];
    if (same.length < 2) return { name, exportName };
    const others = same.filter((n) => n !== name).map((n) => `"${n}"`);
    return {
      name,
      exportName,
      collision: `tool "${name}" and ${others.join(", ")} all map to the export name "${exportName}"; neither is importable until the upstream renames one`,
    };
  });
}

export interface CategoryProposal {
  category: Category | null;
  /** Why: which annotation, or that there was none. */
  because: string;
}

/**
 * readOnlyHint -> read, destructiveHint -> write, openWorldHint -> external. Only explicit hints
 * count; the strongest wins (write over external over read). No hint: no proposal.
 */
export function proposeCategory(annotations: Record<string, unknown>): CategoryProposal {
  if (annotations.destructiveHint === true) return { category: "write", because: "destructiveHint" };
  if (annotations.openWorldHint === true) return { category: "external", because: "openWorldHint" };
  if (annotations.readOnlyHint === true) return { category: "read", because: "readOnlyHint" };
  if (annotations.readOnlyHint === false) {
    return { category: "write", because: "readOnlyHint false" };
  }
  return { category: null, because: "the tool declares no annotations" };
}
