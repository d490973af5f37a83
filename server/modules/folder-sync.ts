/**
 * Publishing every folder under a directory, shared by the sources that load one at start
 * (toolsets, skills): a broken folder is reported with its diagnostics and skipped, the others
 * still publish, and one summary line says what happened.
 */
import fs from "node:fs";
import path from "node:path";
import { isAppError } from "../core/errors";

export interface FolderFailure<Diagnostic> {
  name: string;
  dir: string;
  message: string;
  errors: Diagnostic[];
}

export interface FolderSyncResult<Published, Diagnostic> {
  published: Published[];
  failed: FolderFailure<Diagnostic>[];
  /** One line for a start log: "toolsets from …: 6 loaded (2 updated, 4 unchanged), 1 failed: broken". */
  summary: string;
}

type Status = "created" | "updated" | "unchanged";

/** Publishes each of `dirs`; an AppError is that folder's failure, anything else is thrown. */
export async function publishFolders<Published extends { status: Status }, Diagnostic>(
  noun: string,
  root: string,
  dirs: readonly string[],
  publish: (dir: string) => Promise<Published>,
): Promise<FolderSyncResult<Published, Diagnostic>> {
  const published: Published[] = [];
  const failed: FolderFailure<Diagnostic>[] = [];
  for (const dir of dirs) {
    try {
      published.push(await publish(dir));
    } catch (error) {
      if (!isAppError(error)) throw error;
      const details = error.details as { errors?: Diagnostic[] } | undefined;
      failed.push({ name: path.basename(dir), dir, message: error.message, errors: details?.errors ?? [] });
    }
  }
  const count = (status: Status) => published.filter((p) => p.status === status).length;
  const parts = [
    count("created") && `${count("created")} new`,
    count("updated") && `${count("updated")} updated`,
    count("unchanged") && `${count("unchanged")} unchanged`,
  ].filter(Boolean);
  const summary =
    `${noun} from ${root}: ${published.length} loaded${parts.length ? ` (${parts.join(", ")})` : ""}` +
    (failed.length ? `, ${failed.length} failed: ${failed.map((f) => f.name).join(", ")}` : "");
  return { published, failed, summary };
}

/**
 * The start-time load of a source's folder: a missing folder is one line naming the variable
 * that sets it; each failure is logged with its diagnostics; the summary is returned.
 */
export async function loadFolderAtStart<Diagnostic>(
  dir: string,
  what: { none: string; envVar: string; failed: (name: string, message: string) => string },
  sync: (dir: string) => Promise<FolderSyncResult<unknown, Diagnostic>>,
  format: (diagnostic: Diagnostic, dir: string) => string,
  log: (line: string) => void,
): Promise<string> {
  if (!fs.existsSync(dir)) return `folder ${dir} not found; ${what.none} loaded (set ${what.envVar})`;
  const result = await sync(dir);
  for (const failure of result.failed) {
    log(what.failed(failure.name, failure.message));
    for (const d of failure.errors) log(`  ${format(d, failure.dir)}`);
  }
  return result.summary;
}
