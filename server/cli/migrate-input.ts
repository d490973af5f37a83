/**
 * What the migrate commands share: their options (--out, --name, --category, --force, and
 * --python where the command writes either language) and the legacy definition read from
 * <file.json>, so both refuse a bad category or an unreadable file in the same words.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { CATEGORIES, type Category } from "../core/capabilities/types";
import { AppError } from "../core/errors";
import { type CliIo, parseCommandArgs, requireArg, UsageError } from "./command";

interface MigrateInput {
  /** The legacy definition as parsed JSON (its shape is the migration's to check). */
  definition: unknown;
  out?: string;
  name?: string;
  category?: Category;
  force: boolean;
  python: boolean;
}

export function readMigrateInput(
  args: string[],
  io: CliIo,
  accepts: { python?: boolean } = {},
): MigrateInput {
  const { values, positionals } = parseCommandArgs(args, {
    out: { type: "string" },
    name: { type: "string" },
    category: { type: "string" },
    force: { type: "boolean" },
    ...(accepts.python ? { python: { type: "boolean" as const } } : {}),
  });
  const file = path.resolve(io.cwd, requireArg(positionals[0], "<file.json>"));
  const category = values.category;
  if (category !== undefined && !(CATEGORIES as readonly string[]).includes(category)) {
    throw new UsageError(`--category must be one of ${CATEGORIES.join(", ")}`);
  }
  let definition: unknown;
  try {
    definition = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new AppError("BAD_INPUT", `cannot read ${file}: ${error instanceof Error ? error.message : error}`);
  }
  return {
    definition,
    ...(values.out !== undefined ? { out: values.out } : {}),
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...(category !== undefined ? { category: category as Category } : {}),
    force: values.force === true,
    python: (values as { python?: boolean }).python === true,
  };
}
