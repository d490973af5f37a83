/** `publish-toolset <dir>...`: validate, compile and store a new version of each toolset folder. */
import path from "node:path";
import { isAppError } from "../core/errors";
import {
  formatDiagnostic,
  isToolsetFolder,
  listToolsetFolders,
  type ToolsetDiagnostic,
} from "../core/toolsets";
import { publishToolset } from "../modules/toolsets";
import { type CliCommand, EXIT, parseCommandArgs, UsageError } from "./command";
import { openMigratedDb } from "./open-db";

export const publishToolsetCommand: CliCommand = {
  name: "publish-toolset",
  summary: "store a new version of toolset folders (no-op when unchanged; prints what changed)",
  usage: `usage: npm run toolstore -- publish-toolset <dir>... [--json]

  <dir>   a toolset folder (doc.md + toolset.ts), or a folder of toolset folders
  --json  print the publish results as JSON

Validates like validate-toolset, compiles toolset.ts with the TypeScript transpiler and stores
source, compiled JavaScript, doc, content hash and bindings as a new version. Republishing the same
content changes nothing. A changed version prints its diff; a changed category waits for an admin
in the console, and grants or allow rules given to the previous version stop applying.`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { json: { type: "boolean" } });
    if (positionals.length === 0) throw new UsageError("name at least one folder");
    const folders = positionals.flatMap((p) => {
      const abs = path.resolve(io.cwd, p);
      return isToolsetFolder(abs) ? [abs] : listToolsetFolders(abs);
    });
    if (folders.length === 0) throw new UsageError(`no toolset folders found in ${positionals.join(", ")}`);
    const db = await openMigratedDb();
    let failed = 0;
    const results: unknown[] = [];
    try {
      for (const dir of folders) {
        const shown = path.relative(io.cwd, dir) || ".";
        try {
          const result = await publishToolset(db, { dir, origin: "cli" });
          results.push(result);
          if (values.json) continue;
          for (const w of result.warnings) io.err(formatDiagnostic(w, shown));
          io.out(result.message);
        } catch (error) {
          if (!isAppError(error)) throw error;
          failed++;
          const errors = (error.details as { errors?: ToolsetDiagnostic[] } | undefined)?.errors;
          results.push({ folder: shown, error: error.code, message: error.message, errors: errors ?? [] });
          if (values.json) continue;
          if (errors) for (const d of errors) io.err(formatDiagnostic(d, shown));
          else io.err(`${shown}: ${error.message}`);
          io.out(`✗ ${shown}: not published`);
        }
      }
    } finally {
      await db.$disconnect();
    }
    if (values.json) io.out(JSON.stringify(results, null, 2));
    return failed > 0 ? EXIT.failed : EXIT.ok;
  },
};
