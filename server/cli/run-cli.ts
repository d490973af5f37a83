/**
 * The dispatcher behind `npm run toolstore -- <command>`: finds the command, prints usage on a
 * wrong invocation, and maps AppError to one line and exit code 1. Commands are listed in
 * ./commands.ts.
 */
import { isAppError } from "../core/errors";
import { type CliCommand, type CliIo, EXIT, UsageError } from "./command";
import { COMMANDS } from "./commands";

const CLI_NAME = "npm run toolstore --";

function helpText(commands: readonly CliCommand[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `usage: ${CLI_NAME} <command> [options]`,
    "",
    "commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    `${CLI_NAME} help <command> shows the options of one command.`,
  ].join("\n");
}

export async function runCli(
  argv: string[],
  io: CliIo,
  commands: readonly CliCommand[] = COMMANDS,
): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "help" || name === "--help" || name === "-h") {
    const topic = name === "help" ? commands.find((c) => c.name === rest[0]) : undefined;
    io.out(topic ? topic.usage : helpText(commands));
    return EXIT.ok;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`unknown command "${name}"\n\n${helpText(commands)}`);
    return EXIT.usage;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    io.out(command.usage);
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${command.name}: ${error.message}\n\n${command.usage}`);
      return EXIT.usage;
    }
    if (isAppError(error)) {
      io.err(`${command.name}: ${error.message}`);
      return EXIT.failed;
    }
    throw error;
  }
}
