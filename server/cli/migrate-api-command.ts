/** `migrate-api <file.json>`: turns a legacy API definition into a toolset folder that validates. */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AppError } from "../core/errors";
import {
  DOC_FILE,
  formatDiagnostic,
  migrateLegacyApi,
  PYTHON_SOURCE_FILE,
  SOURCE_FILE,
  validateToolsetFiles,
} from "../core/toolsets";
import { parsePythonToolset } from "../services/python-runtime";
import { type CliCommand, EXIT } from "./command";
import { readMigrateInput } from "./migrate-input";

export const migrateApiCommand: CliCommand = {
  name: "migrate-api",
  summary: 'turn a legacy { name, type: "api", endpoint, method, parameters } JSON into a toolset folder',
  usage: `usage: npm run toolstore -- migrate-api <file.json> [--out <dir>] [--name <toolset>] [--category <c>] [--python] [--force]

  <file.json>      the legacy definition; parameters as a JSON Schema object, an array of
                   { name, type, description, required }, or a map of name to
                   { type, required, default, description }
  --python         write toolset.py (httpx) instead of toolset.ts
  --out <dir>      where to write the folder (default ./toolsets/<name>)
  --name <name>    toolset name (default derived from the definition's name)
  --category <c>   read | write | execute | external (default external for GET/HEAD, write otherwise)
  --force          overwrite an existing folder`,
  async run(args, io) {
    const input = readMigrateInput(args, io, { python: true });
    const migrated = migrateLegacyApi(input.definition, {
      ...(input.name ? { name: input.name } : {}),
      ...(input.category ? { category: input.category } : {}),
      ...(input.python ? { language: "python" as const } : {}),
    });
    const codeFile = input.python ? PYTHON_SOURCE_FILE : SOURCE_FILE;
    const out = path.resolve(io.cwd, input.out ?? path.join("toolsets", migrated.name));
    const name = path.basename(out);
    const validation = await validateToolsetFiles(
      { name, files: migrated.files },
      { parsePython: parsePythonToolset },
    );
    if (!validation.ok) {
      for (const d of validation.errors) io.err(formatDiagnostic(d, path.relative(io.cwd, out)));
      throw new AppError(
        "INTERNAL",
        "the generated toolset does not validate (a bug in migrate-api); nothing written",
      );
    }
    if (existsSync(out) && !input.force) {
      throw new AppError(
        "CONFLICT",
        `${path.relative(io.cwd, out)} exists; pass --force to overwrite or --out elsewhere`,
      );
    }
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, codeFile), migrated.files.source);
    writeFileSync(path.join(out, DOC_FILE), migrated.files.doc);
    const shown = path.relative(io.cwd, out);
    io.out(`✓ wrote ${shown}/ (${codeFile}, ${DOC_FILE}): ${migrated.method} ${migrated.endpoint}`);
    for (const b of validation.parsed?.bindings ?? [])
      io.out(`    ${b.name} [${b.category}]  ${b.signature}`);
    for (const note of migrated.notes) io.out(`  note: ${note}`);
    const host = new URL(migrated.endpoint.replace(/\{(\w+)\}/g, "x")).host;
    io.out(
      `  todo: check the category (${migrated.category}${input.category ? "" : ", chosen from the method; --category to change"})`,
    );
    io.out(
      `  todo: the host ${host} is declared with @hosts; if the API lives elsewhere, set BASE_URL and add its host in the console`,
    );
    io.out("  todo: if the API needs a key, set the secret API_KEY in the console");
    io.out(`  next: npm run toolstore -- publish-toolset ${shown}`);
    return EXIT.ok;
  },
};
