/**
 * Small readers over the TypeScript tree of `toolset.ts` shared by the header and binding parsers:
 * JSDoc tag text, modifiers, and the diagnostic collector that places a finding on its node.
 */
import ts from "typescript";
import { lineOf } from "./type-to-schema";
import type { ToolsetDiagnostic } from "./types";

export interface Collector {
  sourceFile: ts.SourceFile;
  /** The file name findings carry. */
  file: string;
  diagnostics: ToolsetDiagnostic[];
}

export function report(
  c: Collector,
  node: ts.Node,
  message: string,
  hint?: string,
  severity: "error" | "warning" = "error",
): void {
  c.diagnostics.push({
    severity,
    file: c.file,
    ...lineOf(c.sourceFile, node),
    message,
    ...(hint === undefined ? {} : { hint }),
  });
}

export function tagComment(tag: ts.JSDocTag): string {
  return (ts.getTextOfJSDocComment(tag.comment) ?? "").trim();
}

export function tagsNamed(block: ts.JSDoc, name: string): ts.JSDocTag[] {
  return (block.tags ?? []).filter((t) => t.tagName.text === name);
}

export function hasModifier(node: ts.Node, kind: ts.SyntaxKind): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);
}
