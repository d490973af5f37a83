/**
 * Reads the bindings and the header declarations of `toolset.ts` from its syntax tree. The file is
 * never run. Types are mapped by ./type-to-schema; semantic type checking lives in ./check-types.
 *
 * The marking form:
 *   /** Get the weather for a city.
 *    * @tool read
 *    * @param location City name, e.g. "Oslo" *\/
 *   export async function get_weather(location: string, unit: "c" | "f" = "c") { ... }
 */
import ts from "typescript";
import { RESERVED_PREFIX } from "./call-args";
import { parseEnvTag } from "./env-tag";
import { parseBinding } from "./parse-binding";
import { createSchemaContext } from "./schema-context";
import { type Collector, hasModifier, report, tagComment, tagsNamed } from "./toolset-jsdoc";
import type { ParsedToolset, ToolsetBinding, ToolsetDeclarations, ToolsetLanguage } from "./types";

export const SOURCE_FILE = "toolset.ts";
/** The code file of a Python toolset. */
export const PYTHON_SOURCE_FILE = "toolset.py";
export const DOC_FILE = "doc.md";

/** The code file of a toolset written in `language`. */
export function codeFileOf(language: ToolsetLanguage): string {
  return language === "python" ? PYTHON_SOURCE_FILE : SOURCE_FILE;
}

/** The tag that marks a function as a binding; its argument is the category. */
const TOOL_TAG = "tool";
/** Tags allowed only in the comment at the top of the file. */
const HEADER_TAGS = ["hosts", "timeout", "env", "secret"] as const;

export const TIMEOUT_MIN_MS = 100;
export const TIMEOUT_MAX_MS = 300_000;

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
const HOST_PATTERN = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;
const IPV6_HOST = /^\[[0-9a-f:.]+\](:\d{1,5})?$/;

export function isValidHostPattern(host: string): boolean {
  return HOST_PATTERN.test(host) || IPV6_HOST.test(host);
}

export function isValidEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}

function createToolsetSourceFile(source: string): ts.SourceFile {
  return ts.createSourceFile(SOURCE_FILE, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
}

/** Every JSDoc block written directly before a node (the last one is the node's own). */
function jsDocBlocks(node: ts.Node): ts.JSDoc[] {
  // `jsDoc` is set by the parser on declarations; the public getter drops all but the last block.
  return (node as { jsDoc?: ts.JSDoc[] }).jsDoc ?? [];
}

function isHeaderBlock(block: ts.JSDoc): boolean {
  return (block.tags ?? []).some((t) => (HEADER_TAGS as readonly string[]).includes(t.tagName.text));
}

export function parseToolsetSource(source: string): ParsedToolset {
  const sourceFile = createToolsetSourceFile(source);
  const c: Collector = { sourceFile, file: SOURCE_FILE, diagnostics: [] };
  const ctx = createSchemaContext(sourceFile, SOURCE_FILE);
  const first = sourceFile.statements[0];
  const headerBlock = first ? jsDocBlocks(first).find(isHeaderBlock) : undefined;
  const firstBlock = first ? jsDocBlocks(first)[0] : undefined;
  const declarations = parseHeader(headerBlock === firstBlock ? headerBlock : undefined, c);

  const names = new Map<string, number>();
  for (const statement of sourceFile.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name) {
      names.set(statement.name.text, (names.get(statement.name.text) ?? 0) + 1);
    }
  }

  const bindings: ToolsetBinding[] = [];
  for (const statement of sourceFile.statements) {
    checkModuleSyntax(statement, c);
    for (const block of jsDocBlocks(statement)) {
      if (isHeaderBlock(block) && block !== firstBlock) {
        const tag = (block.tags ?? []).find((t) =>
          (HEADER_TAGS as readonly string[]).includes(t.tagName.text),
        );
        report(
          c,
          tag ?? block,
          `@${tag?.tagName.text ?? "hosts"} belongs in the comment at the top of toolset.ts`,
          "move @hosts, @timeout, @env and @secret into the first comment of the file, before any code",
        );
      }
      if (isHeaderBlock(block) && tagsNamed(block, TOOL_TAG).length > 0) {
        report(
          c,
          block,
          "one comment holds both toolset tags (@hosts, @timeout, @env, @secret) and @tool",
          "write the toolset header as its own comment at the top of the file, then the function's comment",
        );
      }
    }
    const blocks = jsDocBlocks(statement);
    const own = blocks[blocks.length - 1];
    const toolTag = own && own !== headerBlock ? tagsNamed(own, TOOL_TAG)[0] : undefined;
    if (!toolTag || !own) {
      if (
        ts.isFunctionDeclaration(statement) &&
        statement.name &&
        hasModifier(statement, ts.SyntaxKind.ExportKeyword)
      ) {
        report(
          c,
          statement.name,
          `exported function \`${statement.name.text}\` is not marked with @tool, so it is not a binding`,
          "add `@tool read` (or write/execute/external) to its doc comment, or drop `export` if it is a helper",
          "warning",
        );
      }
      continue;
    }
    if (!ts.isFunctionDeclaration(statement)) {
      report(
        c,
        toolTag,
        "@tool marks a function declaration, but this comment is on something else",
        "write `export function name(...) { ... }` (or `export async function`) under the comment",
      );
      continue;
    }
    const binding = parseBinding(statement, own, toolTag, names, c, ctx);
    if (binding) bindings.push(binding);
  }
  c.diagnostics.push(...ctx.diagnostics);
  c.diagnostics.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  return { bindings, declarations, diagnostics: c.diagnostics };
}

function checkModuleSyntax(statement: ts.Statement, c: Collector): void {
  if (ts.isImportDeclaration(statement) || ts.isImportEqualsDeclaration(statement)) {
    report(
      c,
      statement,
      "a toolset is one self-contained file; imports are not available",
      "copy the code you need into toolset.ts (types too)",
    );
    return;
  }
  if (ts.isExportDeclaration(statement) && statement.moduleSpecifier) {
    report(
      c,
      statement,
      "re-exports from other modules are not available in a toolset",
      "export your own functions",
    );
    return;
  }
  if (ts.isModuleDeclaration(statement)) {
    report(
      c,
      statement,
      "namespaces and `declare module` are not available in a toolset",
      "use plain declarations",
    );
    return;
  }
  for (const name of declaredNames(statement)) {
    if (name.text.startsWith(RESERVED_PREFIX)) {
      report(c, name, `the name \`${name.text}\` is reserved (prefix ${RESERVED_PREFIX})`, "rename it");
    }
  }
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      report(
        c,
        node,
        "dynamic `import()` is not available in a toolset",
        "copy the code you need into toolset.ts",
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(statement);
}

function declaredNames(statement: ts.Statement): ts.Identifier[] {
  if (
    (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) &&
    statement.name !== undefined
  ) {
    return [statement.name];
  }
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name] : []));
  }
  return [];
}

function parseHeader(block: ts.JSDoc | undefined, c: Collector): ToolsetDeclarations {
  const declarations: ToolsetDeclarations = { hosts: [], env: [], description: "" };
  if (!block) return declarations;
  declarations.description = (ts.getTextOfJSDocComment(block.comment) ?? "").trim();
  for (const tag of block.tags ?? []) {
    const name = tag.tagName.text;
    const comment = tagComment(tag);
    if (name === "hosts") {
      const hosts = comment.split(/[\s,]+/).filter(Boolean);
      if (hosts.length === 0) {
        report(c, tag, "@hosts lists no host", "write `@hosts api.example.com, *.example.org`");
      }
      for (const host of hosts) {
        const normal = host.toLowerCase();
        if (/^https?:\/\//.test(normal) || normal.includes("/")) {
          report(
            c,
            tag,
            `@hosts takes host names, not URLs: \`${host}\``,
            `write \`@hosts ${hostOf(host)}\``,
          );
        } else if (!isValidHostPattern(normal)) {
          report(
            c,
            tag,
            `@hosts: \`${host}\` is not a host name`,
            "write e.g. `api.example.com`, `*.example.com` or `localhost:8080`",
          );
        } else if (!declarations.hosts.includes(normal)) {
          declarations.hosts.push(normal);
        }
      }
    } else if (name === "timeout") {
      const ms = Number(comment.replace(/ms$/, "").trim());
      if (
        !/^\d+(ms)?$/.test(comment) ||
        !Number.isInteger(ms) ||
        ms < TIMEOUT_MIN_MS ||
        ms > TIMEOUT_MAX_MS
      ) {
        report(
          c,
          tag,
          `@timeout must be whole milliseconds between ${TIMEOUT_MIN_MS} and ${TIMEOUT_MAX_MS}, got \`${comment}\``,
          "write e.g. `@timeout 5000`",
        );
      } else {
        declarations.timeoutMs = ms;
      }
    } else if (name === "env" || name === "secret") {
      const entry = parseEnvTag(name, comment);
      const varName = entry.name;
      if (!isValidEnvName(varName)) {
        report(
          c,
          tag,
          `@${name} needs an upper-case variable name, got \`${varName || "nothing"}\``,
          `write \`@${name} ${name === "secret" ? "API_KEY" : "BASE_URL"} what it is for\``,
        );
      } else if (declarations.env.some((e) => e.name === varName)) {
        report(c, tag, `environment variable \`${varName}\` is declared twice`);
      } else {
        declarations.env.push(entry);
      }
    }
  }
  return declarations;
}

function hostOf(value: string): string {
  try {
    return new URL(value).host;
  } catch {
    return value.replace(/^https?:\/\//, "").split("/")[0] ?? value;
  }
}
