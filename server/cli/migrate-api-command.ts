/** `migrate-api <file.json>`: turns a legacy API definition into a toolset folder that validates. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CATEGORIES, type Category } from "../core/capabilities/types";
import { AppError } from "../core/errors";
import { DOC_FILE, formatDiagnostic, migrateLegacyApi, SOURCE_FILE, validateToolset } from "../core/toolsets";
import { type CliCommand, EXIT, parseCommandArgs, requireArg, UsageError } from "./command";

export const migrateApiCommand: CliCommand = {
  name: "migrate-api",
  summary: 'turn a legacy { name, type: "api", endpoint, method, parameters } JSON into a toolset folder',
  usage: `usage: npm run toolstore -- migrate-api <file.json> [--out <dir>] [--name <toolset>] [--category <c>] [--force]

  <file.json>      the legacy definition; parameters as a JSON Schema object or an array of
                   { name, type, description, required }
  --out <dir>      where to write the folder (default ./toolsets/<name>)
  --name <name>    toolset name (default derived from the definition's name)
  --category <c>   read | write | execute | external (default external for GET/HEAD, write otherwise)
  --force          overwrite an existing folder`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      out: { type: "string" },
      name: { type: "string" },
      category: { type: "string" },
      force: { type: "boolean" },
    });
    const file = path.resolve(io.cwd, requireArg(positionals[0], "<file.json>"));
    if (values.category !== undefined && !(CATEGORIES as readonly string[]).includes(values.category)) {
      throw new UsageError(`--category must be one of ${CATEGORIES.join(", ")}`);
    }
    let definition: unknown;
    try {
      definition = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      throw new AppError(
        "BAD_INPUT",
        `cannot read ${file}: ${error instanceof Error ? error.message : error}`,
      );
    }
    const migrated = migrateLegacyApi(definition, {
      ...(values.name ? { name: values.name } : {}),
      ...(values.category ? { category: values.category as Category } : {}),
    });
    const out = path.resolve(io.cwd, values.out ?? path.join("toolsets", migrated.name));
    const name = path.basename(out);
    const validation = validateToolset({ name, files: migrated.files });
    if (!validation.ok) {
      for (const d of validation.errors) io.err(formatDiagnostic(d, path.relative(io.cwd, out)));
      throw new AppError(
        "INTERNAL",
        "the generated toolset does not validate (a bug in migrate-api); nothing written",
      );
    }
    if (existsSync(out) && !values.force) {
      throw new AppError(
        "CONFLICT",
        `${path.relative(io.cwd, out)} exists; pass --force to overwrite or --out elsewhere`,
      );
    }
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, SOURCE_FILE), migrated.files.source);
    writeFileSync(path.join(out, DOC_FILE), migrated.files.doc);
    const shown = path.relative(io.cwd, out);
    io.out(`✓ wrote ${shown}/ (${SOURCE_FILE}, ${DOC_FILE}): ${migrated.method} ${migrated.endpoint}`);
    for (const b of validation.parsed?.bindings ?? [])
      io.out(`    ${b.name} [${b.category}]  ${b.signature}`);
    for (const note of migrated.notes) io.out(`  note: ${note}`);
    io.out(`  next: npm run toolstore -- publish-toolset ${shown}`);
    return EXIT.ok;
  },
};
