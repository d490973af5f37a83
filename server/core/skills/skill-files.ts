/**
 * Paths, MIME types and limits of a skill's files. A path is relative to the skill's folder,
 * with forward slashes; `..`, absolute paths and drive letters are refused, never rewritten.
 */
import { createHash } from "node:crypto";
import type { SkillDiagnostic, SkillFileInput, SkillLimits } from "./types";

/** Entries an archiver or an OS adds that are no part of a skill; skipped silently. */
export function isJunkPath(path: string): boolean {
  const parts = path.split("/");
  return parts.some((p) => p === "__MACOSX" || p === ".git" || p === ".DS_Store" || p === "Thumbs.db");
}

/** Why `path` cannot name a file inside a skill, or undefined when it can. */
export function pathProblem(path: string): string | undefined {
  if (path === "") return "is empty";
  if ([...path].some((ch) => ch.charCodeAt(0) < 0x20)) return "holds a control character";
  if (path.startsWith("/") || path.startsWith("\\")) return "is absolute";
  if (/^[A-Za-z]:/.test(path)) return "starts with a drive letter";
  if (path.includes("\\")) return "uses backslashes; use forward slashes";
  const parts = path.split("/");
  if (parts.some((p) => p === "..")) return "climbs out of the skill folder with ..";
  if (parts.some((p) => p === "" || p === ".")) return "has an empty or `.` segment";
  if (path.length > 512) return "is longer than 512 characters";
  return undefined;
}

/** Checks paths and limits of a set of files; returns the problems (empty when fine). */
export function checkSkillFiles(files: SkillFileInput[], limits: SkillLimits): SkillDiagnostic[] {
  const problems: SkillDiagnostic[] = [];
  const seen = new Set<string>();
  for (const f of files) {
    const problem = pathProblem(f.path);
    if (problem) {
      problems.push({
        file: f.path,
        message: `the path "${f.path}" ${problem}`,
        fix: "keep every file inside the skill folder, named by a relative path like references/guide.md",
      });
      continue;
    }
    if (seen.has(f.path)) {
      problems.push({ file: f.path, message: `"${f.path}" appears twice`, fix: "keep one file per path" });
    }
    seen.add(f.path);
    if (f.bytes.byteLength > limits.maxFileBytes) {
      problems.push({
        file: f.path,
        message: `${f.path} is ${formatBytes(f.bytes.byteLength)}; one file may be at most ${formatBytes(limits.maxFileBytes)}`,
        fix: "split the file, or keep large assets out of the skill",
      });
    }
  }
  if (files.length > limits.maxFiles) {
    problems.push({
      file: ".",
      message: `the skill has ${files.length} files; at most ${limits.maxFiles} are allowed`,
      fix: "remove files an agent does not need",
    });
  }
  const total = files.reduce((n, f) => n + f.bytes.byteLength, 0);
  if (total > limits.maxTotalBytes) {
    problems.push({
      file: ".",
      message: `the skill's files add up to ${formatBytes(total)}; at most ${formatBytes(limits.maxTotalBytes)} are allowed`,
      fix: "remove or shrink large files",
    });
  }
  return problems;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB`;
}

const MIME_BY_EXT: Record<string, string> = {
  md: "text/markdown",
  markdown: "text/markdown",
  txt: "text/plain",
  js: "text/javascript",
  mjs: "text/javascript",
  cjs: "text/javascript",
  ts: "text/x-typescript",
  py: "text/x-python",
  sh: "text/x-shellscript",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  toml: "application/toml",
  html: "text/html",
  htm: "text/html",
  css: "text/css",
  csv: "text/csv",
  xml: "application/xml",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
  zip: "application/zip",
};

const decoder = new TextDecoder("utf-8", { fatal: true });

/** True when the bytes are UTF-8 text with no NUL byte. */
function isText(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    decoder.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

export function mimeFor(path: string, bytes: Uint8Array): { mime: string; text: boolean } {
  const ext = path.includes(".") ? (path.split(".").pop() ?? "").toLowerCase() : "";
  const text = isText(bytes);
  const mime = MIME_BY_EXT[ext] ?? (text ? "text/plain" : "application/octet-stream");
  return { mime, text };
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A version's hash: every path with its digest, in path order. */
export function skillContentHash(files: Array<{ path: string; sha256: string }>): string {
  const lines = [...files]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((f) => `${f.path}\0${f.sha256}`);
  return sha256Hex(lines.join("\n"));
}
