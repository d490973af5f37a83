/** `validate-skill <dir>...`: checks skill folders (or a folder of them) and prints file:line findings. */
import { existsSync } from "node:fs";
import path from "node:path";
import {
  formatSkillDiagnostic,
  listSkillFolders,
  loadSkillFromFiles,
  readSkillFolder,
  SKILL_FILE,
} from "../core/skills";
import { type CliCommand, EXIT, parseCommandArgs, UsageError } from "./command";

export const validateSkillCommand: CliCommand = {
  name: "validate-skill",
  summary: "check skill folders: SKILL.md frontmatter, paths, symlinks, limits (exit 1 on errors)",
  usage: `usage: npm run toolstore -- validate-skill <dir>...

  <dir>  a skill folder (holding SKILL.md), or a folder of skill folders (e.g. skills)`,
  async run(args, io) {
    const { positionals } = parseCommandArgs(args, {});
    if (positionals.length === 0) throw new UsageError("name at least one folder");
    const folders = positionals.flatMap((p) => {
      const abs = path.resolve(io.cwd, p);
      return existsSync(path.join(abs, SKILL_FILE)) ? [abs] : listSkillFolders(abs);
    });
    if (folders.length === 0) throw new UsageError(`no skill folders found in ${positionals.join(", ")}`);
    let failed = 0;
    for (const folder of folders) {
      const shown = path.relative(io.cwd, folder) || ".";
      const read = readSkillFolder(folder);
      const loaded = read.ok ? loadSkillFromFiles(read.name, read.files) : read;
      if (!loaded.ok) {
        failed++;
        for (const d of loaded.diagnostics) io.err(formatSkillDiagnostic(d, shown));
        io.out(`✗ ${shown}: ${loaded.diagnostics.length} error(s)`);
        continue;
      }
      for (const d of loaded.warnings) io.err(formatSkillDiagnostic(d, shown));
      const { skill } = loaded;
      io.out(
        `✓ ${shown}: ${skill.files.length} file(s), ${skill.totalBytes} bytes, hash ${skill.contentHash.slice(0, 12)}`,
      );
    }
    return failed > 0 ? EXIT.failed : EXIT.ok;
  },
};
