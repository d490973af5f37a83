/**
 * Turns a set of files (a folder read from disk, an uploaded folder or zip) into a ParsedSkill,
 * or into diagnostics with file:line and a fix. Used by startup sync, the CLI and the console.
 */
import { parseSkillMarkdown } from "./parse-skill";
import { checkSkillFiles, mimeFor, sha256Hex, skillContentHash } from "./skill-files";
import {
  DEFAULT_SKILL_LIMITS,
  type ParsedSkill,
  SKILL_FILE,
  type SkillFileInput,
  type SkillLimits,
  type SkillLoadResult,
} from "./types";

export function loadSkillFromFiles(
  name: string,
  input: SkillFileInput[],
  limits: SkillLimits = DEFAULT_SKILL_LIMITS,
): SkillLoadResult {
  const problems = checkSkillFiles(input, limits);
  if (problems.length > 0) return { ok: false, name, diagnostics: problems };
  const skillMd = input.find((f) => f.path === SKILL_FILE);
  if (!skillMd) {
    const nested = input.find((f) => f.path.endsWith(`/${SKILL_FILE}`));
    return {
      ok: false,
      name,
      diagnostics: [
        {
          file: ".",
          message: `the skill has no ${SKILL_FILE} at its top level${nested ? ` (found ${nested.path})` : ""}`,
          fix: nested
            ? `upload the folder that holds ${SKILL_FILE} itself`
            : `add ${SKILL_FILE} with frontmatter \`name\` and \`description\``,
        },
      ],
    };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(skillMd.bytes);
  } catch {
    return {
      ok: false,
      name,
      diagnostics: [{ file: SKILL_FILE, message: "SKILL.md is not UTF-8 text", fix: "save it as UTF-8" }],
    };
  }
  const parsed = parseSkillMarkdown(text, name);
  if (!parsed.ok) return { ok: false, name, diagnostics: parsed.diagnostics };

  const files: ParsedSkill["files"] = input
    .map((f) => ({
      path: f.path,
      bytes: f.bytes,
      size: f.bytes.byteLength,
      sha256: sha256Hex(f.bytes),
      ...mimeFor(f.path, f.bytes),
    }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    ok: true,
    warnings: parsed.warnings,
    skill: {
      ...parsed.frontmatter,
      body: parsed.body,
      files,
      contentHash: skillContentHash(files),
      totalBytes: files.reduce((n, f) => n + f.size, 0),
    },
  };
}

/** `SKILL.md:3: message (fix: …)` for a terminal or a log line. */
export function formatSkillDiagnostic(
  d: { file: string; line?: number; message: string; fix: string },
  dir?: string,
) {
  const where = `${dir ? `${dir}/` : ""}${d.file}${d.line === undefined ? "" : `:${d.line}`}`;
  return `${where}: ${d.message} (fix: ${d.fix})`;
}
