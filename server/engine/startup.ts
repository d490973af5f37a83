/** What a starting instance does before it serves: publish the toolsets and skills folders. */
import fs from "node:fs";
import { formatSkillDiagnostic } from "../core/skills";
import { formatDiagnostic } from "../core/toolsets";
import type { Db } from "../db";
import { syncSkillsFolder } from "../modules/skills";
import { syncToolsetsFolder } from "../modules/toolsets";

/**
 * Publishes every toolset folder under `dir` (unchanged ones are no-ops). A broken toolset is
 * reported with file:line and skipped; it never stops the start. Returns the one-line summary.
 */
export async function loadToolsetsFolder(db: Db, dir: string, log: (line: string) => void = console.log) {
  if (!fs.existsSync(dir)) return `folder ${dir} not found; none loaded (set TOOLSTORE_TOOLSETS_DIR)`;
  const result = await syncToolsetsFolder(db, dir, { origin: "sync" });
  for (const failure of result.failed) {
    log(`toolset ${failure.name} was not loaded: ${failure.message}`);
    for (const d of failure.errors) log(`  ${formatDiagnostic(d, failure.dir)}`);
  }
  return result.summary;
}

/**
 * Publishes every skill folder under `dir` (unchanged ones are no-ops). A broken skill is
 * reported with file:line and a fix and skipped; the other skills still load.
 */
export async function loadSkillsFolder(db: Db, dir: string, log: (line: string) => void = console.log) {
  if (!fs.existsSync(dir)) return `folder ${dir} not found; no skills loaded (set TOOLSTORE_SKILLS_DIR)`;
  const result = await syncSkillsFolder(db, dir);
  for (const failure of result.failed) {
    log(`skill ${failure.name} was not loaded:`);
    for (const d of failure.errors) log(`  ${formatSkillDiagnostic(d, failure.dir)}`);
  }
  return result.summary;
}
