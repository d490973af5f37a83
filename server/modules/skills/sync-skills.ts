/**
 * Publishes every skill folder under a directory (the shipped `skills/` at startup, or
 * TOOLSTORE_SKILLS_DIR). A broken skill is reported with file:line and skipped; the others load.
 */
import { formatSkillDiagnostic, listSkillFolders, type SkillDiagnostic } from "../../core/skills";
import type { Db } from "../../db";
import { logger } from "../../infra/log";
import { type FolderFailure, type FolderSyncResult, loadFolderAtStart, publishFolders } from "../folder-sync";
import { type PublishSkillResult, publishSkill } from "./publish-skill";

export type SkillSyncFailure = FolderFailure<SkillDiagnostic>;
export type SkillSyncResult = FolderSyncResult<PublishSkillResult, SkillDiagnostic>;

export function syncSkillsFolder(db: Db, root: string): Promise<SkillSyncResult> {
  return publishFolders("skills", root, listSkillFolders(root), (dir) =>
    publishSkill(db, { dir, origin: "sync" }),
  );
}

/**
 * Publishes every skill folder under `dir` (unchanged ones are no-ops). A broken skill is
 * reported with file:line and a fix and skipped; the other skills still load.
 */
export function loadSkillsFolder(
  db: Db,
  dir: string,
  log: (line: string) => void = (line) => logger("skills").info(line),
) {
  return loadFolderAtStart(
    dir,
    { none: "no skills", envVar: "TOOLSTORE_SKILLS_DIR", failed: (name) => `skill ${name} was not loaded:` },
    (d) => syncSkillsFolder(db, d),
    formatSkillDiagnostic,
    log,
  );
}
