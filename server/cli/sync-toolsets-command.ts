/** `sync-toolsets [dir]`: publish every toolset folder under a directory (default TOOLSTORE_TOOLSETS_DIR). */
import path from "node:path";
import { formatDiagnostic } from "../core/toolsets";
import { loadEnv } from "../env";
import { syncToolsetsFolder } from "../modules/toolsets";
import { type CliCommand, EXIT, parseCommandArgs } from "./command";
import { openMigratedDb } from "./open-db";

export const syncToolsetsCommand: CliCommand = {
  name: "sync-toolsets",
  summary: "publish every folder under toolsets/ (what the server does at start)",
  usage: `usage: npm run toolstore -- sync-toolsets [<dir>]

  <dir>  folder of toolset folders (default: TOOLSTORE_TOOLSETS_DIR, ./toolsets)

Publishes each toolset whose content changed and reports the ones that do not validate; the
others are published either way. Exit code 1 when any folder failed.`,
  async run(args, io) {
    const { positionals } = parseCommandArgs(args, {});
    const root = path.resolve(io.cwd, positionals[0] ?? loadEnv().TOOLSTORE_TOOLSETS_DIR);
    const db = await openMigratedDb();
    try {
      const result = await syncToolsetsFolder(db, root, { origin: "sync" });
      for (const p of result.published) {
        io.out(p.status === "unchanged" ? `  ${p.message}` : p.message);
      }
      for (const f of result.failed) {
        const shown = path.relative(io.cwd, f.dir) || f.dir;
        if (f.errors.length) for (const d of f.errors) io.err(formatDiagnostic(d, shown));
        else io.err(`${shown}: ${f.message}`);
      }
      io.out(result.summary);
      return result.failed.length > 0 ? EXIT.failed : EXIT.ok;
    } finally {
      await db.$disconnect();
    }
  },
};
