/**
 * `keys create --name <name> [--mode plan|default|auto] [--modules a,b] [--user <username>]`:
 * prints the new key on stdout and nothing else, so it can be captured. The key belongs to the
 * given user, or to the first admin.
 */

import { auditLogFor, cliActor } from "../infra/audit-log";
import { createApiKey } from "../services/api-keys";
import { AppError, type CliCommand, EXIT, parseSubcommandArgs, requireArg } from "./command";
import { openMigratedDb } from "./open-db";

const USAGE = `usage: npm run toolstore -- keys create --name <name> [--mode plan|default|auto] [--modules a,b] [--user <username>]

Creates an API key for MCP clients and prints it on stdout (only the key). It is shown once.
  --name     a label you will recognise in the console
  --mode     plan, default (ask before write/execute/external) or auto; default: default
  --modules  comma separated modules to mount (weather,store); default: all
  --user     the owner (default: the first admin)`;

export const keysCommand: CliCommand = {
  name: "keys",
  summary: "create an API key for MCP clients (prints only the key)",
  usage: USAGE,
  async run(args, io) {
    // `create` is the only subcommand.
    const { values } = parseSubcommandArgs("keys", args, ["create"], {
      name: { type: "string" },
      mode: { type: "string" },
      modules: { type: "string" },
      user: { type: "string" },
    });
    const name = requireArg(values.name, "--name");
    const db = await openMigratedDb();
    try {
      const owner = values.user
        ? await db.user.findUnique({ where: { username: values.user.toLowerCase() }, select: { id: true } })
        : await db.user.findFirst({
            where: { role: "admin", disabledAt: null },
            orderBy: { createdAt: "asc" },
            select: { id: true },
          });
      if (!owner) {
        throw new AppError(
          "NOT_FOUND",
          values.user
            ? `no user named "${values.user}"; list users in the console under Users`
            : "there is no admin yet; run npm start and open the setup link it prints first",
        );
      }
      const mode = (values.mode ?? "default") as "plan" | "default" | "auto";
      const modules = values.modules
        ? values.modules
            .split(",")
            .map((m) => m.trim().replace(/^toolstore\//, ""))
            .filter(Boolean)
        : ["*"];
      const created = await createApiKey(db, owner.id, { name, mode, modules });
      await auditLogFor(db).append({
        actor: cliActor(),
        action: "apiKeys.create",
        target: `api_key:${created.id}`,
        after: { name, mode, modules, userId: owner.id },
        detail: { via: "cli" },
      });
      io.out(created.key);
      return EXIT.ok;
    } finally {
      await db.$disconnect();
    }
  },
};
