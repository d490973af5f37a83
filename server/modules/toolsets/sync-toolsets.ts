/**
 * Publishes every toolset folder under a directory (the shipped `toolsets/` at startup, or the
 * console's "sync" button). A broken folder is reported and skipped; the others still publish.
 */
import path from "node:path";
import { isAppError } from "../../core/errors";
import { listToolsetFolders, type ToolsetDiagnostic } from "../../core/toolsets";
import type { Db } from "../../db";
import { type PublishOrigin, type PublishResult, publishToolset } from "./publish-toolset";

export interface SyncFailure {
  name: string;
  dir: string;
  message: string;
  errors: ToolsetDiagnostic[];
}

export interface SyncResult {
  published: PublishResult[];
  failed: SyncFailure[];
  /** One line for a start log: "toolsets: 6 loaded (2 updated, 4 unchanged), 1 failed: broken". */
  summary: string;
}

export async function syncToolsetsFolder(
  db: Db,
  root: string,
  options: { origin?: PublishOrigin; userId?: string | null } = {},
): Promise<SyncResult> {
  const published: PublishResult[] = [];
  const failed: SyncFailure[] = [];
  for (const dir of listToolsetFolders(root)) {
    try {
      published.push(
        await publishToolset(db, { dir, origin: options.origin ?? "sync", userId: options.userId ?? null }),
      );
    } catch (error) {
      if (!isAppError(error)) throw error;
      const details = error.details as { errors?: ToolsetDiagnostic[] } | undefined;
      failed.push({ name: path.basename(dir), dir, message: error.message, errors: details?.errors ?? [] });
    }
  }
  const count = (status: PublishResult["status"]) => published.filter((p) => p.status === status).length;
  const parts = [
    count("created") && `${count("created")} new`,
    count("updated") && `${count("updated")} updated`,
    count("unchanged") && `${count("unchanged")} unchanged`,
  ].filter(Boolean);
  const summary =
    `toolsets from ${root}: ${published.length} loaded${parts.length ? ` (${parts.join(", ")})` : ""}` +
    (failed.length ? `, ${failed.length} failed: ${failed.map((f) => f.name).join(", ")}` : "");
  return { published, failed, summary };
}
