/**
 * The static import check that runs before any action code: the source must parse as an ES
 * module, every import specifier must be a `toolstore/<module>` mounted for the session, every
 * imported name a listed export, and there must be a default export. Dynamic `import()` is
 * refused. Failures carry did-you-mean hints and become envelope errors of kind "refused".
 * Parsing uses acorn; nothing is evaluated.
 */
import { type Node, parse } from "acorn";
import { didYouMean } from "../capabilities/did-you-mean";
import { type AnyNode, nameOf, walkNodes } from "./action-ast";

export const MODULE_PREFIX = "toolstore/";
export const DEFAULT_MAX_CODE_CHARS = 256 * 1024;

export interface StaticCheckOk {
  ok: true;
  /** Modules the action imports, with the names it uses (`*` for a namespace import). */
  imports: Record<string, string[]>;
}

export interface StaticCheckRefused {
  ok: false;
  message: string;
  problems: string[];
}

export type StaticCheckResult = StaticCheckOk | StaticCheckRefused;

interface SourceNode extends Node {
  value?: unknown;
}

function where(code: string, pos: number): string {
  let line = 1;
  let col = 1;
  for (let i = 0; i < pos && i < code.length; i++) {
    if (code.charCodeAt(i) === 10) {
      line += 1;
      col = 1;
    } else col += 1;
  }
  return `line ${line}:${col}`;
}

/**
 * @param mounted module name (without prefix) -> export names, for the session.
 */
export function checkActionSource(
  code: string,
  mounted: Readonly<Record<string, readonly string[]>>,
  maxChars = DEFAULT_MAX_CODE_CHARS,
): StaticCheckResult {
  const refuse = (problems: string[]): StaticCheckRefused => ({
    ok: false,
    message:
      problems.length === 1 ? (problems[0] ?? "") : `${problems.length} problems: ${problems.join("; ")}`,
    problems,
  });
  if (typeof code !== "string" || code.trim() === "") {
    return refuse(["the action is empty; write: export default async function (input) { ... }"]);
  }
  if (code.length > maxChars)
    return refuse([`the action is ${code.length} characters, over the limit of ${maxChars}`]);

  let program: Node;
  try {
    program = parse(code, { ecmaVersion: "latest", sourceType: "module", allowHashBang: false });
  } catch (error) {
    if (error instanceof RangeError) return refuse(["the action is nested too deeply to parse"]);
    const e = error as SyntaxError & { loc?: { line: number; column: number } };
    const loc = e.loc ? ` (line ${e.loc.line}:${e.loc.column + 1})` : "";
    return refuse([`SyntaxError: ${e.message.replace(/\s*\(\d+:\d+\)$/, "")}${loc}`]);
  }

  const problems: string[] = [];
  const imports: Record<string, Set<string>> = {};
  const mountedNames = Object.keys(mounted);
  let hasDefault = false;

  const checkSpecifier = (source: SourceNode, pos: number): string | undefined => {
    const spec = String(source.value);
    if (!spec.startsWith(MODULE_PREFIX)) {
      problems.push(
        `import "${spec}" (${where(code, pos)}) is not allowed: only "toolstore/<module>" imports exist here` +
          didYouMean(
            spec,
            mountedNames.map((m) => MODULE_PREFIX + m),
          ),
      );
      return undefined;
    }
    const module = spec.slice(MODULE_PREFIX.length);
    if (!Object.hasOwn(mounted, module)) {
      const hint = didYouMean(module, mountedNames, (m) => `"${MODULE_PREFIX}${m}"`);
      const list = mountedNames.length ? mountedNames.map((m) => MODULE_PREFIX + m).join(", ") : "none";
      problems.push(`module "${spec}" is not mounted for this session${hint}. Mounted: ${list}`);
      return undefined;
    }
    imports[module] ??= new Set();
    return module;
  };

  const checkName = (module: string, name: string) => {
    const exports = mounted[module] ?? [];
    imports[module]?.add(name);
    if (name === "*" || exports.includes(name)) return;
    if (name === "default") {
      problems.push(
        `"${MODULE_PREFIX}${module}" has no default export; import named functions: import { ${exports.slice(0, 3).join(", ")} } from "${MODULE_PREFIX}${module}"`,
      );
      return;
    }
    problems.push(
      `"${MODULE_PREFIX}${module}" has no export "${name}"${didYouMean(name, exports)}. Exports: ${exports.join(", ") || "none"}`,
    );
  };

  const body = (program as unknown as { body: AnyNode[] }).body;
  for (const node of body) {
    if (node.type === "ImportDeclaration") {
      const module = checkSpecifier(node.source as SourceNode, node.start);
      if (!module) continue;
      for (const s of node.specifiers as AnyNode[]) {
        if (s.type === "ImportSpecifier") checkName(module, nameOf(s.imported));
        else if (s.type === "ImportDefaultSpecifier") checkName(module, "default");
        else checkName(module, "*");
      }
    } else if (node.type === "ExportNamedDeclaration" || node.type === "ExportAllDeclaration") {
      if (node.source) {
        const module = checkSpecifier(node.source as SourceNode, node.start);
        if (module && node.type === "ExportNamedDeclaration") {
          for (const s of node.specifiers as AnyNode[]) checkName(module, nameOf(s.local));
        } else if (module) checkName(module, "*");
      }
      if (node.type === "ExportNamedDeclaration") {
        for (const s of (node.specifiers as AnyNode[]) ?? [])
          if (nameOf(s.exported) === "default") hasDefault = true;
      }
    } else if (node.type === "ExportDefaultDeclaration") {
      hasDefault = true;
    }
  }

  // Dynamic import() anywhere in the tree.
  walkNodes(program, (node) => {
    if (node.type === "ImportExpression") {
      problems.push(
        `dynamic import() (${where(code, node.start)}) is not allowed; use a static import at the top`,
      );
    }
  });

  if (!hasDefault) {
    problems.push("the action has no default export; write: export default async function (input) { ... }");
  }
  if (problems.length > 0) return refuse(problems);
  const out: Record<string, string[]> = {};
  for (const [module, names] of Object.entries(imports)) out[module] = [...names];
  return { ok: true, imports: out };
}
