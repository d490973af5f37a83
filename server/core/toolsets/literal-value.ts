/**
 * Literal values in `toolset.ts` read from syntax alone: a parameter's default initializer as JSON,
 * and the schema an unannotated parameter gets from its default. Nothing is evaluated.
 */
import ts from "typescript";
import type { JsonSchema, JsonValue } from "./types";

/** The key a property name spells, when it is written out (not computed). */
export function propertyName(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

/**
 * The JSON value of a default initializer, when it is a literal (`"c"`, `3`, `-1`, `true`, `null`,
 * arrays and objects of literals). Anything computed has no recorded default.
 */
export function literalValue(expr: ts.Expression): { value: JsonValue } | undefined {
  if (ts.isParenthesizedExpression(expr) || ts.isAsExpression(expr) || ts.isSatisfiesExpression(expr)) {
    return literalValue(expr.expression);
  }
  if (ts.isStringLiteral(expr) || ts.isNoSubstitutionTemplateLiteral(expr)) return { value: expr.text };
  if (ts.isNumericLiteral(expr)) return { value: Number(expr.text) };
  if (
    ts.isPrefixUnaryExpression(expr) &&
    expr.operator === ts.SyntaxKind.MinusToken &&
    ts.isNumericLiteral(expr.operand)
  ) {
    return { value: -Number(expr.operand.text) };
  }
  if (expr.kind === ts.SyntaxKind.TrueKeyword) return { value: true };
  if (expr.kind === ts.SyntaxKind.FalseKeyword) return { value: false };
  if (expr.kind === ts.SyntaxKind.NullKeyword) return { value: null };
  if (ts.isArrayLiteralExpression(expr)) {
    const values: JsonValue[] = [];
    for (const element of expr.elements) {
      const v = literalValue(element);
      if (!v) return undefined;
      values.push(v.value);
    }
    return { value: values };
  }
  if (ts.isObjectLiteralExpression(expr)) {
    const out: Record<string, JsonValue> = {};
    for (const prop of expr.properties) {
      if (!ts.isPropertyAssignment(prop)) return undefined;
      const key = propertyName(prop.name);
      const v = literalValue(prop.initializer);
      if (key === undefined || !v) return undefined;
      out[key] = v.value;
    }
    return { value: out };
  }
  return undefined;
}

/** Schema for an unannotated parameter from its literal default (`unit = "c"` is a string). */
export function schemaFromDefault(value: JsonValue): JsonSchema | undefined {
  if (typeof value === "string") return { type: "string" };
  if (typeof value === "number") return { type: "number" };
  if (typeof value === "boolean") return { type: "boolean" };
  return undefined;
}
