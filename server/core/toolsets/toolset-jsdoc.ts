/**
 * Small readers over the TypeScript tree of `toolset.ts` shared by the header and binding parsers:
 * JSDoc tag text, modifiers, and the diagnostic collector that places a finding on its node.
 */
import ts from "typescript";
import { lineOf } from "./schema-context";
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

/** Description text of the JSDoc attached to a node (property, interface, alias). */
export function jsDocDescription(node: ts.Node): string {
  const blocks = (node as { jsDoc?: ts.JSDoc[] }).jsDoc ?? [];
  const last = blocks[blocks.length - 1];
  if (last) return (ts.getTextOfJSDocComment(last.comment) ?? "").trim();
  // The parser skips a doc comment on the same line as an opening brace: `{ /** City */ city: string }`.
  const file = node.getSourceFile();
  const start = node.getFullStart();
  // A comment on the brace's line counts as the brace's trailing comment, so look at both kinds.
  const ranges = [
    ...(ts.getTrailingCommentRanges(file.text, start) ?? []),
    ...(ts.getLeadingCommentRanges(file.text, start) ?? []),
  ];
  const doc = ranges.filter((r) => file.text.startsWith("/**", r.pos)).pop();
  if (!doc) return "";
  return file.text
    .slice(doc.pos + 3, doc.end - 2)
    .split("\n")
    .map((line) => line.replace(/^\s*\*?\s?/, "").trimEnd())
    .join("\n")
    .trim();
}
