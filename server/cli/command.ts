/**
 * The shape of one CLI command. Commands write through `io` (so tests capture output) and return
 * an exit code; they throw AppError for failures the dispatcher prints as one clear line.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { AppError } from "../core/errors";

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Folder relative paths are resolved against. */
  cwd: string;
}

export interface CliCommand {
  /** What follows `npm run toolstore --`, e.g. `validate-toolset`. */
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Usage text shown by `help <command>` and on a usage error. */
  usage: string;
  run(args: string[], io: CliIo): Promise<number>;
}

/** A wrong invocation: the dispatcher prints the message and the command's usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** `node:util` parseArgs with strict options, turning its errors into UsageError. */
export function parseCommandArgs<T extends Options>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/**
 * parseCommandArgs for a command with subcommands (`audit verify`, `keys create`): the first
 * positional must name one of them, else a usage error names what was given.
 */
export function parseSubcommandArgs<const S extends string, T extends Options>(
  command: string,
  args: string[],
  subcommands: readonly S[],
  options: T,
) {
  const parsed = parseCommandArgs(args, options);
  const given = parsed.positionals[0];
  if (given === undefined || !(subcommands as readonly string[]).includes(given)) {
    throw new UsageError(`unknown ${command} subcommand "${given ?? ""}"`);
  }
  return { ...parsed, subcommand: given as S };
}

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export function requireArg(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

export { AppError };
