/** Entry of `npm run toolstore -- <command>`; see ./run-cli.ts and ./commands.ts. */
import { runCli } from "./run-cli";

const io = {
  out: (text: string) => process.stdout.write(`${text}\n`),
  err: (text: string) => process.stderr.write(`${text}\n`),
  cwd: process.cwd(),
};

runCli(process.argv.slice(2), io).then(
  (code) => {
    // Exit once output is flushed: a command may leave handles open (database, worker pool).
    process.stdout.write("", () => process.exit(code));
  },
  (error: unknown) => {
    process.stderr.write(
      `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
