/**
 * Publishes every toolset folder under a directory (the shipped `toolsets/` at startup, or the
 * console's "sync" button). A broken folder is reported and skipped; the others still publish.
 */
import { formatDiagnostic, listToolsetFolders, type ToolsetDiagnostic } from "../../core/toolsets";
import type { Db } from "../../db";
import { logger } from "../../infra/log";
import { type FolderFailure, type FolderSyncResult, loadFolderAtStart, publishFolders } from "../folder-sync";
import { type PublishOrigin, type PublishResult, publishToolset } from "./publish-toolset";

export type SyncFailure = FolderFailure<ToolsetDiagnostic>;
export type SyncResult = FolderSyncResult<PublishResult, ToolsetDiagnostic>;

export function syncToolsetsFolder(
  db: Db,
  root: string,
  options: { origin?: PublishOrigin; userId?: string | null } = {},
): Promise<SyncResult> {
  return publishFolders("toolsets", root, listToolsetFolders(root), (dir) =>
    publishToolset(db, { dir, origin: options.origin ?? "sync", userId: options.userId ?? null }),
  );
}

/**
 * Publishes every toolset folder under `dir` (unchanged ones are no-ops). A broken toolset is
 * reported with file:line and skipped; it never stops the start. Returns the one-line summary.
 */
export function loadToolsetsFolder(
  db: Db,
  dir: string,
  log: (line: string) => void = (line) => logger("toolsets").info(line),
) {
  return loadFolderAtStart(
    dir,
    {
      none: "none",
      envVar: "TOOLSTORE_TOOLSETS_DIR",
      failed: (name, message) => `toolset ${name} was not loaded: ${message}`,
    },
    (d) => syncToolsetsFolder(db, d, { origin: "sync" }),
    formatDiagnostic,
    log,
  );
}
