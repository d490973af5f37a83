/** Decides whether `next build` must run: a hash of every input of the build, kept beside it. */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const INPUTS = [
  "app",
  "server",
  "public",
  "next.config.mjs",
  "proxy.ts",
  "package-lock.json",
  "tsconfig.json",
  "prisma/schema.prisma",
];
const SKIP = new Set(["node_modules", ".next", "generated"]);
// Same rule as next.config.mjs; this script runs outside Next, so it reads the variable itself.
const distDir = () => process.env.NEXT_DIST_DIR || ".next";

function walk(entry: string, out: string[]) {
  if (!fs.existsSync(entry)) return;
  const stat = fs.statSync(entry);
  if (stat.isFile()) {
    if (!/\.test\.tsx?$/.test(entry)) out.push(entry);
    return;
  }
  for (const name of fs.readdirSync(entry).sort()) {
    if (!SKIP.has(name) && !name.startsWith(".next")) walk(path.join(entry, name), out);
  }
}

export function sourceHash(root: string): string {
  const files: string[] = [];
  for (const input of INPUTS) walk(path.join(root, input), files);
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(path.relative(root, file));
    hash.update(fs.readFileSync(file));
  }
  return hash.digest("hex");
}

const stampFile = (root: string) => path.join(root, distDir(), "toolstore-build-stamp");

export function buildIsCurrent(root: string): boolean {
  if (!fs.existsSync(path.join(root, distDir(), "BUILD_ID"))) return false;
  const stamp = stampFile(root);
  return fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === sourceHash(root);
}

export function writeBuildStamp(root: string): void {
  fs.writeFileSync(stampFile(root), sourceHash(root));
}
