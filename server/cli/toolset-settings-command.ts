/** `toolset-settings <name> [--timeout <ms>] [--hosts a,b] [--add-host h] [--remove-host h]`. */
import { auditLogFor, cliActor } from "../infra/audit-log";
import { getToolset, updateToolsetSettings } from "../modules/toolsets";
import { type CliCommand, EXIT, parseCommandArgs, requireArg, UsageError } from "./command";
import { openMigratedDb } from "./open-db";

export const toolsetSettingsCommand: CliCommand = {
  name: "toolset-settings",
  summary: "show or change a toolset's timeout and allowed hosts",
  usage: `usage: npm run toolstore -- toolset-settings <toolset> [--timeout <ms>] [--hosts a,b | --add-host h | --remove-host h]

  --timeout <ms>      per-call timeout of the toolset's code
  --hosts a,b         replace the hosts its fetch may reach (api.example.com, *.example.com,
                      localhost:8080, or * for any host)
  --add-host <h>      add one host; --remove-host <h> removes one`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      timeout: { type: "string" },
      hosts: { type: "string" },
      "add-host": { type: "string", multiple: true },
      "remove-host": { type: "string", multiple: true },
    });
    const toolset = requireArg(positionals[0], "<toolset>");
    if (values.hosts !== undefined && (values["add-host"] || values["remove-host"])) {
      throw new UsageError("use --hosts alone, or --add-host / --remove-host");
    }
    const db = await openMigratedDb();
    try {
      const current = await getToolset(db, toolset);
      const changes: { timeoutMs?: number; allowedHosts?: string[] } = {};
      if (values.timeout !== undefined) {
        const ms = Number(values.timeout);
        if (!Number.isFinite(ms)) throw new UsageError("--timeout takes milliseconds");
        changes.timeoutMs = ms;
      }
      if (values.hosts !== undefined) changes.allowedHosts = values.hosts.split(",");
      if (values["add-host"] || values["remove-host"]) {
        const remove = new Set((values["remove-host"] ?? []).map((h) => h.toLowerCase()));
        changes.allowedHosts = [
          ...current.allowedHosts.filter((h) => !remove.has(h)),
          ...(values["add-host"] ?? []),
        ];
      }
      const settings = Object.keys(changes).length
        ? await updateToolsetSettings(db, toolset, changes)
        : { timeoutMs: current.timeoutMs, allowedHosts: current.allowedHosts };
      if (Object.keys(changes).length) {
        await auditLogFor(db).append({
          actor: cliActor(),
          action: "toolsets.updateSettings",
          target: `toolset:${toolset}`,
          before: { timeoutMs: current.timeoutMs, allowedHosts: current.allowedHosts },
          after: settings,
          detail: { via: "cli" },
        });
      }
      io.out(
        `${toolset}: timeout ${settings.timeoutMs} ms; allowed hosts: ${settings.allowedHosts.join(", ") || "none"}`,
      );
      return EXIT.ok;
    } finally {
      await db.$disconnect();
    }
  },
};
