/**
 * The state the type-to-schema mapping carries through one file: its local type declarations, the
 * names being resolved (to refuse recursive types) and the diagnostics found, each with its line.
 */
import ts from "typescript";
import type { JsonSchema, ToolsetDiagnostic } from "./types";

export type LocalTypeDeclaration = ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.EnumDeclaration;

export interface SchemaContext {
  sourceFile: ts.SourceFile;
  fileName: string;
  /** Interfaces, type aliases and enums declared at the top level of the file. */
  declarations: Map<string, LocalTypeDeclaration>;
  diagnostics: ToolsetDiagnostic[];
  /** Names being resolved, to refuse recursive types instead of looping. */
  resolving: string[];
}

export interface MappedType {
  schema: JsonSchema;
  /** The type includes `undefined`, so the value may be left out. */
  optional: boolean;
}

export function createSchemaContext(sourceFile: ts.SourceFile, fileName: string): SchemaContext {
  const declarations = new Map<string, LocalTypeDeclaration>();
  for (const statement of sourceFile.statements) {
    if (
      ts.isInterfaceDeclaration(statement) ||
      ts.isTypeAliasDeclaration(statement) ||
      ts.isEnumDeclaration(statement)
    ) {
      declarations.set(statement.name.text, statement);
    }
  }
  return { sourceFile, fileName, declarations, diagnostics: [], resolving: [] };
}

export function lineOf(sourceFile: ts.SourceFile, node: ts.Node): { line: number; column: number } {
  const { line, character } = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile));
  return { line: line + 1, column: character + 1 };
}

export function fail(ctx: SchemaContext, node: ts.Node, message: string, hint?: string): undefined {
  ctx.diagnostics.push({
    severity: "error",
    file: ctx.fileName,
    ...lineOf(ctx.sourceFile, node),
    message,
    ...(hint === undefined ? {} : { hint }),
  });
  return undefined;
}

/** A node's source on one line, cut to 60 characters, for messages. */
export function nodeText(ctx: SchemaContext, node: ts.Node): string {
  const raw = node.getText(ctx.sourceFile).replace(/\s+/g, " ");
  return raw.length > 60 ? `${raw.slice(0, 57)}...` : raw;
}
