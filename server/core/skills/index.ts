/** Skills: SKILL.md folders read progressively by agents. Framework-free. */
export { formatSkillDiagnostic, loadSkillFromFiles } from "./load-skill";
export { createMemorySkillStore } from "./memory-store";
export { parseSkillMarkdown } from "./parse-skill";
export type { SkillRecord, SkillStore, SkillSummary } from "./ports";
export { listSkillFolders, readSkillFolder, type SkillFolderRead } from "./read-skill-folder";
export { createPythonScriptRunner, type PythonScriptRunnerDeps } from "./run-python-script";
export {
  createSandboxScriptRunner,
  type SkillScript,
  type SkillScriptResult,
  type SkillScriptRunner,
} from "./run-script";
export { createSkillCatalogSource } from "./skill-catalog";
export {
  checkSkillFiles,
  formatBytes,
  isJunkPath,
  mimeFor,
  pathProblem,
  sha256Hex,
  skillContentHash,
} from "./skill-files";
export { createSkillsModule, READ_CAP_CHARS } from "./skills-module";
export {
  DEFAULT_SKILL_LIMITS,
  type ParsedSkill,
  SKILL_FILE,
  type SkillDiagnostic,
  type SkillFileEntry,
  type SkillFileInput,
  type SkillFrontmatter,
  type SkillLimits,
  type SkillLoadResult,
} from "./types";
