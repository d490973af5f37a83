/**
 * Skills service: publishing versions (folders at start, console uploads), the database-backed
 * SkillStore that `toolstore/skills`, the catalog and the MCP resources read, and the console's
 * queries. Explicit exports only.
 */
export {
  type PublishSkillInput,
  type PublishSkillResult,
  publishSkill,
  type SkillOrigin,
} from "./publish-skill";
export {
  diffSkillVersions,
  getSkillForConsole,
  listSkillsForConsole,
  readSkillFileForConsole,
  removeSkill,
  type SkillFileDiff,
  type SkillListItem,
  VIEWER_MAX_CHARS,
} from "./skill-console";
export { createPrismaSkillStore } from "./skill-store";
export {
  loadSkillsFolder,
  type SkillSyncFailure,
  type SkillSyncResult,
  syncSkillsFolder,
} from "./sync-skills";
export { filesFromZip, type UploadedSkill, unwrapSkillFolder } from "./upload";
