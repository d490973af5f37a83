/**
 * `toolset-env <name> [set <VAR> [<value>] [--secret] | unset <VAR>]`: a toolset's environment.
 * Without a value, `set` reads it from stdin, so a secret need not appear in shell history.
 * Secrets are never printed.
 */
import { auditLogFor, cliActor } from "../infra/audit-log";
import { listToolsetEnv, setToolsetEnvVar, unsetToolsetEnvVar } from "../modules/toolsets";
import { type CliCommand, EXIT, parseCommandArgs, requireArg, UsageError } from "./command";
import { openMigratedDb } from "./open-db";

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

export const toolsetEnvCommand: CliCommand = {
  name: "toolset-env",
  summary: "list, set or unset a toolset's environment variables and secrets",
  usage: `usage: npm run toolstore -- toolset-env <toolset>                          list (secrets masked)
       npm run toolstore -- toolset-env <toolset> set <VAR> [<value>] [--secret]
       npm run toolstore -- toolset-env <toolset> unset <VAR>

  set without <value> reads the value from stdin (keeps secrets out of shell history).
  --secret marks the value secret; variables declared with @secret are secret anyway.`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { secret: { type: "boolean" } });
    const toolset = requireArg(positionals[0], "<toolset>");
    const action = positionals[1];
    if (action !== undefined && action !== "set" && action !== "unset") {
      throw new UsageError(`unknown toolset-env action "${action}"`);
    }
    const db = await openMigratedDb();
    try {
      if (action === "set") {
        const name = requireArg(positionals[2], "<VAR>");
        const value = positionals[3] ?? (await readStdin());
        const saved = await setToolsetEnvVar(db, {
          toolset,
          name,
          value,
          ...(values.secret ? { secret: true } : {}),
        });
        await auditLogFor(db).append({
          actor: cliActor(),
          action: "toolsets.setEnv",
          target: `toolset:${toolset}/${saved.name}`,
          after: { name: saved.name, secret: saved.secret },
          detail: { via: "cli" },
        });
        io.out(`${toolset}: ${saved.name}${saved.secret ? " (secret)" : ""} = ${saved.display}`);
        return EXIT.ok;
      }
      if (action === "unset") {
        const name = requireArg(positionals[2], "<VAR>");
        await unsetToolsetEnvVar(db, { toolset, name });
        await auditLogFor(db).append({
          actor: cliActor(),
          action: "toolsets.unsetEnv",
          target: `toolset:${toolset}/${name}`,
          detail: { via: "cli" },
        });
        io.out(`${toolset}: ${name} unset`);
        return EXIT.ok;
      }
      const env = await listToolsetEnv(db, toolset);
      if (env.length === 0) io.out(`${toolset} declares and has no environment variables`);
      for (const e of env) {
        io.out(
          `${e.name}${e.secret ? " (secret)" : ""} = ${e.set ? e.display : "(not set)"}${e.description ? `  — ${e.description}` : ""}`,
        );
      }
      return EXIT.ok;
    } finally {
      await db.$disconnect();
    }
  },
};
