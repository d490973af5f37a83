/**
 * Console uploads: a folder (files with relative paths, as a browser's folder picker gives them)
 * or a zip. A single top-level folder holding SKILL.md is taken as the skill (its name unless one
 * is given). Paths are checked by the core; nothing is written to disk.
 */
import { unzipSync } from "fflate";
import { AppError } from "../../core/errors";
import { DEFAULT_SKILL_LIMITS, isJunkPath, SKILL_FILE, type SkillFileInput } from "../../core/skills";

export interface UploadedSkill {
  name: string;
  files: SkillFileInput[];
}

/** Strips one leading folder shared by every file when SKILL.md is inside it, not at the top. */
export function unwrapSkillFolder(files: SkillFileInput[], name?: string): UploadedSkill {
  const kept = files.filter((f) => !isJunkPath(f.path));
  if (kept.some((f) => f.path === SKILL_FILE)) {
    if (!name) throw new AppError("BAD_INPUT", "name the skill: the upload has SKILL.md at its top level");
    return { name, files: kept };
  }
  const tops = new Set(kept.map((f) => f.path.split("/")[0]));
  const [top] = tops;
  if (tops.size === 1 && top && kept.some((f) => f.path === `${top}/${SKILL_FILE}`)) {
    return {
      name: name ?? top,
      files: kept.map((f) => ({ path: f.path.slice(top.length + 1), bytes: f.bytes })),
    };
  }
  throw new AppError(
    "SKILL_INVALID",
    `the upload has no ${SKILL_FILE}; upload the skill's folder (the one that holds ${SKILL_FILE})`,
    {
      details: {
        errors: [
          { file: ".", message: `no ${SKILL_FILE} found`, fix: `pick the folder that holds ${SKILL_FILE}` },
        ],
      },
    },
  );
}

/** Entries of a zip; directories skipped. Refuses archives that would inflate past the limits. */
export function filesFromZip(zip: Uint8Array, limits = DEFAULT_SKILL_LIMITS): SkillFileInput[] {
  let entries: Record<string, Uint8Array>;
  let count = 0;
  let total = 0;
  try {
    entries = unzipSync(zip, {
      filter(file) {
        if (file.name.endsWith("/")) return false;
        count += 1;
        total += file.originalSize;
        if (
          count > limits.maxFiles + 50 ||
          file.originalSize > limits.maxFileBytes ||
          total > limits.maxTotalBytes
        ) {
          throw new AppError(
            "SKILL_INVALID",
            `the zip holds more than a skill may (${limits.maxFiles} files, ${limits.maxFileBytes} bytes a file, ${limits.maxTotalBytes} bytes in all)`,
            {
              details: {
                errors: [
                  { file: file.name, message: "over the skill limits", fix: "remove large or extra files" },
                ],
              },
            },
          );
        }
        return true;
      },
    });
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError("BAD_INPUT", `the file is not a readable zip: ${(error as Error).message}`);
  }
  return Object.entries(entries).map(([path, bytes]) => ({ path, bytes }));
}
