/**
 * Publishes every skill folder under a directory (the shipped `skills/` at startup, or
 * TOOLSTORE_SKILLS_DIR). A broken skill is reported with file:line and skipped; the others load.
 */
import path from "node:path";
import { isAppError } from "../../core/errors";
import { listSkillFolders, type SkillDiagnostic } from "../../core/skills";
import type { Db } from "../../db";
import { type PublishSkillResult, publishSkill } from "./publish-skill";

export interface SkillSyncFailure {
  name: string;
  dir: string;
  message: string;
  errors: SkillDiagnostic[];
}

export interface SkillSyncResult {
  published: PublishSkillResult[];
  failed: SkillSyncFailure[];
  summary: string;
}

export async function syncSkillsFolder(db: Db, root: string): Promise<SkillSyncResult> {
  const published: PublishSkillResult[] = [];
  const failed: SkillSyncFailure[] = [];
  for (const dir of listSkillFolders(root)) {
    try {
      published.push(await publishSkill(db, { dir, origin: "sync" }));
    } catch (error) {
      if (!isAppError(error)) throw error;
      const details = error.details as { errors?: SkillDiagnostic[] } | undefined;
      failed.push({ name: path.basename(dir), dir, message: error.message, errors: details?.errors ?? [] });
    }
  }
  const count = (status: PublishSkillResult["status"]) => published.filter((p) => p.status === status).length;
  const parts = [
    count("created") && `${count("created")} new`,
    count("updated") && `${count("updated")} updated`,
    count("unchanged") && `${count("unchanged")} unchanged`,
  ].filter(Boolean);
  const summary =
    `skills from ${root}: ${published.length} loaded${parts.length ? ` (${parts.join(", ")})` : ""}` +
    (failed.length ? `, ${failed.length} failed: ${failed.map((f) => f.name).join(", ")}` : "");
  return { published, failed, summary };
}
