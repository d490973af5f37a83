/** `migrate-docker <file.json>`: turns a legacy docker tool into a Python toolset folder that validates. */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AppError } from "../core/errors";
import { migrateLegacyDocker } from "../core/python/migrate-docker";
import { DOC_FILE, formatDiagnostic, PYTHON_SOURCE_FILE } from "../core/toolsets";
import { parsePythonToolset } from "../services/python-runtime";
import { type CliCommand, EXIT } from "./command";
import { readMigrateInput } from "./migrate-input";

export const migrateDockerCommand: CliCommand = {
  name: "migrate-docker",
  summary: 'turn a legacy { name, type: "docker", code, function } JSON into a Python toolset folder',
  usage: `usage: npm run toolstore -- migrate-docker <file.json> [--out <dir>] [--name <toolset>] [--category <c>] [--force]

  <file.json>      the legacy definition; code as base64 or plain Python text; function = the
                   function to expose (default main), which becomes the toolset's one @tool binding
  --out <dir>      where to write the folder (default ./toolsets/<name>)
  --name <name>    toolset name (default derived from the definition's name)
  --category <c>   read | write | execute | external (default: none; pending until an admin sets it)
  --force          overwrite an existing folder`,
  async run(args, io) {
    const input = readMigrateInput(args, io);
    const migrated = await migrateLegacyDocker(input.definition, {
      parsePython: parsePythonToolset,
      ...(input.name ? { name: input.name } : {}),
      ...(input.category ? { category: input.category } : {}),
    });
    const out = path.resolve(io.cwd, input.out ?? path.join("toolsets", migrated.name));
    const shown = path.relative(io.cwd, out);
    if (!migrated.validation.ok) {
      for (const d of migrated.validation.errors) io.err(formatDiagnostic(d, shown));
      throw new AppError(
        "TOOLSET_INVALID",
        "the migrated code does not validate as a toolset (see above); nothing written",
      );
    }
    if (existsSync(out) && !input.force) {
      throw new AppError("CONFLICT", `${shown} exists; pass --force to overwrite or --out elsewhere`);
    }
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, PYTHON_SOURCE_FILE), migrated.files.source);
    writeFileSync(path.join(out, DOC_FILE), migrated.files.doc);
    io.out(
      `✓ wrote ${shown}/ (${PYTHON_SOURCE_FILE}, ${DOC_FILE}) from ${migrated.decoded ? "base64" : "plain"} code`,
    );
    for (const b of migrated.validation.parsed?.bindings ?? [])
      io.out(`    ${b.name} [${b.categoryPending ? "category pending" : b.category}]  ${b.signature}`);
    for (const w of migrated.validation.warnings) io.out(`  warning: ${formatDiagnostic(w, shown)}`);
    for (const t of migrated.todo) io.out(`  todo: ${t}`);
    io.out(`  next: npm run toolstore -- publish-toolset ${shown}`);
    return EXIT.ok;
  },
};
