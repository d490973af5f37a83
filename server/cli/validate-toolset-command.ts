/** `validate-toolset <dir>...`: checks toolset folders (or a folder of them) and prints file:line findings. */
import path from "node:path";
import {
  formatDiagnostic,
  isToolsetFolder,
  listToolsetFolders,
  readToolsetFolder,
  validateToolsetFiles,
} from "../core/toolsets";
import { parsePythonToolset } from "../services/python-runtime";
import { type CliCommand, EXIT, parseCommandArgs, UsageError } from "./command";

export const validateToolsetCommand: CliCommand = {
  name: "validate-toolset",
  summary: "check toolset folders: two files, doc, bindings, categories, types (exit 1 on errors)",
  usage: `usage: npm run toolstore -- validate-toolset <dir>... [--json] [--no-typecheck] [--strict]

  <dir>           a toolset folder (doc.md + toolset.ts or toolset.py), or a folder of toolset folders (e.g. toolsets)
  --json          print the findings and bindings as JSON
  --no-typecheck  skip the TypeScript type check of the code (faster; schema checks still run)
  --strict        treat warnings as errors`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: "boolean" },
      "no-typecheck": { type: "boolean" },
      strict: { type: "boolean" },
    });
    if (positionals.length === 0) throw new UsageError("name at least one folder");
    const folders = positionals.flatMap((p) => {
      const abs = path.resolve(io.cwd, p);
      return isToolsetFolder(abs) ? [abs] : listToolsetFolders(abs);
    });
    if (folders.length === 0) throw new UsageError(`no toolset folders found in ${positionals.join(", ")}`);
    let failed = 0;
    const report: unknown[] = [];
    for (const folder of folders) {
      const shown = path.relative(io.cwd, folder) || ".";
      const validation = await validateToolsetFiles(readToolsetFolder(folder), {
        typecheck: !values["no-typecheck"],
        parsePython: parsePythonToolset,
      });
      const bad = !validation.ok || (values.strict && validation.warnings.length > 0);
      if (bad) failed++;
      if (values.json) {
        report.push({
          folder: shown,
          ok: !bad,
          errors: validation.errors,
          warnings: validation.warnings,
          bindings: validation.parsed?.bindings ?? [],
          declarations: validation.parsed?.declarations,
        });
        continue;
      }
      for (const d of [...validation.errors, ...validation.warnings]) io.err(formatDiagnostic(d, shown));
      const bindings = validation.parsed?.bindings ?? [];
      if (bad) {
        io.out(`✗ ${shown}: ${validation.errors.length} error(s), ${validation.warnings.length} warning(s)`);
      } else {
        io.out(
          `✓ ${shown}: ${bindings.length} binding(s)${validation.warnings.length ? `, ${validation.warnings.length} warning(s)` : ""}`,
        );
        for (const b of bindings)
          io.out(`    ${b.name} [${b.categoryPending ? "category pending" : b.category}]  ${b.signature}`);
      }
    }
    if (values.json) io.out(JSON.stringify(report, null, 2));
    return failed > 0 ? EXIT.failed : EXIT.ok;
  },
};
