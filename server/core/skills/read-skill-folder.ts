/**
 * Reads skill folders from disk. Every path stays inside the skill's folder: a symlink whose
 * target resolves outside it is refused (the whole skill is not loaded), as are symlinked
 * folders. Limits are checked from file sizes before any large file is read.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { AppError } from "../errors";
import { isJunkPath } from "./skill-files";
import {
  DEFAULT_SKILL_LIMITS,
  SKILL_FILE,
  type SkillDiagnostic,
  type SkillFileInput,
  type SkillLimits,
} from "./types";

export type SkillFolderRead =
  | { ok: true; name: string; files: SkillFileInput[] }
  | { ok: false; name: string; diagnostics: SkillDiagnostic[] };

export function readSkillFolder(dir: string, limits: SkillLimits = DEFAULT_SKILL_LIMITS): SkillFolderRead {
  const abs = path.resolve(dir);
  const name = path.basename(abs);
  if (!existsSync(abs) || !statSync(abs).isDirectory())
    throw new AppError("NOT_FOUND", `${dir} is not a folder`);
  const root = realpathSync(abs);
  const files: SkillFileInput[] = [];
  const diagnostics: SkillDiagnostic[] = [];
  let total = 0;
  const inside = (target: string) => target === root || target.startsWith(root + path.sep);

  const walk = (relDir: string) => {
    for (const entry of readdirSync(path.join(root, relDir), { withFileTypes: true })) {
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
      if (isJunkPath(rel)) continue;
      const full = path.join(root, rel);
      const st = lstatSync(full);
      let target = full;
      if (st.isSymbolicLink()) {
        let real: string;
        try {
          real = realpathSync(full);
        } catch {
          diagnostics.push({
            file: rel,
            message: `${rel} is a broken symlink`,
            fix: "remove it or point it at a file in the skill",
          });
          continue;
        }
        if (!inside(real)) {
          diagnostics.push({
            file: rel,
            message: `${rel} is a symlink to ${real}, outside the skill folder`,
            fix: "copy the file into the skill folder instead of linking to it",
          });
          continue;
        }
        if (statSync(real).isDirectory()) {
          diagnostics.push({
            file: rel,
            message: `${rel} is a symlinked folder`,
            fix: "copy the folder instead of linking it",
          });
          continue;
        }
        target = real;
      } else if (st.isDirectory()) {
        walk(rel);
        continue;
      } else if (!st.isFile()) {
        diagnostics.push({ file: rel, message: `${rel} is not a regular file`, fix: "remove it" });
        continue;
      }
      const size = statSync(target).size;
      if (files.length + 1 > limits.maxFiles) {
        diagnostics.push({
          file: ".",
          message: `the skill has more than ${limits.maxFiles} files`,
          fix: "remove files an agent does not need",
        });
        return;
      }
      if (size > limits.maxFileBytes) {
        diagnostics.push({
          file: rel,
          message: `${rel} is ${size} bytes; one file may be at most ${limits.maxFileBytes} bytes`,
          fix: "split the file, or keep large assets out of the skill",
        });
        continue;
      }
      total += size;
      if (total > limits.maxTotalBytes) {
        diagnostics.push({
          file: ".",
          message: `the skill's files add up to more than ${limits.maxTotalBytes} bytes`,
          fix: "remove or shrink large files",
        });
        return;
      }
      files.push({ path: rel, bytes: new Uint8Array(readFileSync(target)) });
    }
  };
  walk("");
  if (diagnostics.length > 0) return { ok: false, name, diagnostics };
  return { ok: true, name, files };
}

/** Sub-folders of `root` holding a SKILL.md, sorted. */
export function listSkillFolders(root: string): string[] {
  const abs = path.resolve(root);
  if (!existsSync(abs) || !statSync(abs).isDirectory())
    throw new AppError("NOT_FOUND", `${root} is not a folder`);
  return readdirSync(abs, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => path.join(abs, e.name))
    .filter((d) => existsSync(path.join(d, SKILL_FILE)))
    .sort();
}
