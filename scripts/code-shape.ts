/**
 * The shape rules `npm test` keeps (scripts/code-shape.test.ts): no function over
 * MAX_FUNCTION_LINES outside the sandbox worker's guest-facing code unless it says why, and
 * imports that only point down the layers. Read with the TypeScript parser; nothing is run.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

export const MAX_FUNCTION_LINES = 150;
/** A function longer than the limit must carry this comment, with the reason, just above it. */
export const LONG_FUNCTION_MARK = "long-function:";

/** Guest-facing code of the sandbox worker: the QuickJS host side that guests call into. */
const GUEST_FACING = new Set(["server/core/sandbox/worker-main.ts"]);

export interface LongFunction {
  file: string;
  line: number;
  name: string;
  lines: number;
  /** The reason the comment above it gives, when it has one. */
  reason?: string;
}

export function sourceFiles(root: string, dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name === "node_modules" || entry.name === "generated" || entry.name.startsWith("."))
          continue;
        walk(rel);
      } else if (/\.(ts|tsx|mjs)$/.test(entry.name) && !/\.d\.ts$/.test(entry.name)) {
        out.push(rel);
      }
    }
  };
  for (const dir of dirs) if (existsSync(path.join(root, dir))) walk(dir);
  return out.sort();
}

const isTestFile = (file: string) => /\.test\.tsx?$/.test(file) || file.includes("/testing/");

function functionName(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) {
    return node.name.getText();
  }
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText();
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  if (ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) {
    return node.name.getText();
  }
  return "(anonymous)";
}

/** Functions over the limit in the non-test sources under `dirs`. */
export function longFunctions(root: string, dirs = ["app", "server"]): LongFunction[] {
  const found: LongFunction[] = [];
  for (const file of sourceFiles(root, dirs)) {
    if (isTestFile(file) || GUEST_FACING.has(file)) continue;
    const text = readFileSync(path.join(root, file), "utf8");
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && "body" in node && node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = end - start + 1;
        if (lines > MAX_FUNCTION_LINES) {
          const reason = markAbove(source, node);
          found.push({
            file,
            line: start + 1,
            name: functionName(node),
            lines,
            ...(reason ? { reason } : {}),
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The `long-function:` reason in the comments before the statement that holds `node`. */
function markAbove(source: ts.SourceFile, node: ts.Node): string | undefined {
  let holder: ts.Node = node;
  while (holder.parent && !ts.isSourceFile(holder.parent) && !ts.isBlock(holder.parent)) {
    holder = holder.parent;
  }
  const text = source.getFullText();
  const ranges = ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? [];
  for (const range of ranges) {
    const comment = text.slice(range.pos, range.end);
    const at = comment.indexOf(LONG_FUNCTION_MARK);
    if (at >= 0) {
      const reason = comment
        .slice(at + LONG_FUNCTION_MARK.length)
        .replace(/\*\/\s*$/, "")
        .replace(/\s*\n\s*(\*|\/\/)\s?/g, " ")
        .trim();
      if (reason) return reason;
    }
  }
  return undefined;
}

/**
 * The layers, bottom first. A file may import from its own layer and the ones below it, never
 * from one above; the composition root is the one place that names every source plug-in.
 */
export const LAYERS: ReadonlyArray<{ name: string; paths: readonly string[]; packages?: RegExp }> = [
  {
    name: "core",
    paths: ["server/core/"],
    // Framework-free: no web framework, no database client, no process singletons.
    packages:
      /^(next|react|react-dom|@trpc\/.*|@tanstack\/.*|@prisma\/.*|prisma|pg|better-sqlite3|server-only)(\/.*)?$/,
  },
  {
    name: "infra",
    paths: ["server/infra/", "server/db/", "server/db.ts", "server/env.ts"],
    packages: /^(next|react|react-dom|@trpc\/.*|@tanstack\/.*)(\/.*)?$/,
  },
  {
    name: "services",
    paths: ["server/services/"],
    packages: /^(next|react|react-dom|@trpc\/.*|@tanstack\/.*|@prisma\/.*|prisma|pg|better-sqlite3)(\/.*)?$/,
  },
  {
    name: "sources",
    paths: ["server/modules/"],
    packages: /^(next|react|react-dom|@trpc\/.*|@tanstack\/.*|@prisma\/.*|prisma|pg|better-sqlite3)(\/.*)?$/,
  },
  {
    name: "root",
    paths: ["server/engine/"],
    packages: /^(next|react|react-dom|@trpc\/.*|@tanstack\/.*)(\/.*)?$/,
  },
  { name: "adapters", paths: ["server/api/", "server/mcp/", "server/cli/", "server/http/"] },
  { name: "app", paths: ["app/", "proxy.ts"] },
];

export interface LayerViolation {
  file: string;
  line: number;
  specifier: string;
  message: string;
}

function layerOf(file: string): number {
  return LAYERS.findIndex((layer) =>
    layer.paths.some((p) => (p.endsWith("/") ? file.startsWith(p) : file === p)),
  );
}

function resolveLocal(root: string, from: string, specifier: string): string | undefined {
  let base: string;
  if (specifier.startsWith("@/")) base = specifier.slice(2);
  else if (specifier.startsWith("."))
    base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  else return undefined;
  const candidates = [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`];
  for (const candidate of candidates) {
    try {
      readFileSync(path.join(root, candidate));
      return candidate;
    } catch {
      // next candidate
    }
  }
  return base.replace(/\.js$/, ".ts");
}

/** Imports that point up the layers, or at a package the importing layer must not use. */
export function layerViolations(
  root: string,
  dirs = ["app", "server"],
  extraFiles = ["proxy.ts"],
): LayerViolation[] {
  const violations: LayerViolation[] = [];
  for (const file of [
    ...sourceFiles(root, dirs),
    ...extraFiles.filter((f) => existsSync(path.join(root, f))),
  ]) {
    if (file.startsWith("server/db/generated/")) continue;
    const own = layerOf(file);
    if (own < 0 || isTestFile(file)) continue;
    const text = readFileSync(path.join(root, file), "utf8");
    const info = ts.preProcessFile(text, true, true);
    for (const ref of info.importedFiles) {
      const specifier = ref.fileName;
      const line = text.slice(0, ref.pos).split("\n").length;
      const target = resolveLocal(root, file, specifier);
      if (target === undefined) {
        const forbidden = LAYERS[own]?.packages;
        if (forbidden?.test(specifier)) {
          violations.push({
            file,
            line,
            specifier,
            message: `${LAYERS[own]?.name} must not import the package "${specifier}"`,
          });
        }
        continue;
      }
      const theirs = layerOf(target);
      if (theirs > own) {
        violations.push({
          file,
          line,
          specifier,
          message: `${LAYERS[own]?.name} (${file}) must not import ${LAYERS[theirs]?.name} (${target})`,
        });
      }
    }
  }
  return violations;
}

/** `npx tsx scripts/code-shape.ts`: prints what breaks the shape rules. */
if (process.argv[1] && import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href) {
  const root = path.resolve(import.meta.dirname, "..");
  const long = longFunctions(root);
  for (const f of long) {
    console.log(
      `${f.file}:${f.line} ${f.name}: ${f.lines} lines${f.reason ? ` (allowed: ${f.reason})` : ""}`,
    );
  }
  for (const v of layerViolations(root)) console.log(`${v.file}:${v.line} ${v.message}`);
}
