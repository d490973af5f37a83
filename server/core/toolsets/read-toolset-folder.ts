/**
 * Reads a toolset folder from disk into the shape validation takes. The folder name is the toolset
 * name. Nothing under the folder is imported or run.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { AppError } from "../errors";
import { DOC_FILE, PYTHON_SOURCE_FILE, SOURCE_FILE } from "./parse-toolset";
import type { ToolsetInput } from "./validate-toolset";

/** Larger files are refused: a toolset is one readable file, not a bundle. */
export const MAX_TOOLSET_FILE_BYTES = 512 * 1024;

function readIfFile(file: string): string | undefined {
  if (!existsSync(file) || !statSync(file).isFile()) return undefined;
  if (statSync(file).size > MAX_TOOLSET_FILE_BYTES) {
    throw new AppError(
      "TOOLSET_INVALID",
      `${file} is larger than ${MAX_TOOLSET_FILE_BYTES / 1024} KiB; a toolset is one readable file, not a bundle`,
    );
  }
  return readFileSync(file, "utf8");
}

export function readToolsetFolder(dir: string): ToolsetInput {
  const abs = path.resolve(dir);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) {
    throw new AppError("NOT_FOUND", `${dir} is not a folder`);
  }
  const files: ToolsetInput["files"] = {};
  const doc = readIfFile(path.join(abs, DOC_FILE));
  const source = readIfFile(path.join(abs, SOURCE_FILE));
  // toolset.py makes a Python toolset; a folder with both files is refused by validation.
  const python = source === undefined ? readIfFile(path.join(abs, PYTHON_SOURCE_FILE)) : undefined;
  if (doc !== undefined) files.doc = doc;
  if (source !== undefined) files.source = source;
  if (python !== undefined) {
    files.source = python;
    files.language = "python";
  }
  return { name: path.basename(abs), entries: readdirSync(abs), files };
}

/** Sub-folders of `root` that look like toolsets (hold a toolset.ts, a toolset.py or a doc.md), sorted. */
export function listToolsetFolders(root: string): string[] {
  const abs = path.resolve(root);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) {
    throw new AppError("NOT_FOUND", `${root} is not a folder`);
  }
  return readdirSync(abs, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => path.join(abs, e.name))
    .filter((d) => isToolsetFolder(d))
    .sort();
}

/** True when `dir` itself is a toolset folder rather than a folder of toolsets. */
export function isToolsetFolder(dir: string): boolean {
  return [SOURCE_FILE, PYTHON_SOURCE_FILE, DOC_FILE].some((f) => existsSync(path.join(dir, f)));
}
