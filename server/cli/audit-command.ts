/**
 * `audit verify`: recompute the audit log's hash chain and name the first broken entry (exit 1).
 * `audit export [--action a] [--actor name] [--since ISO]`: the entries as JSON lines on stdout.
 */
import { exportAuditJsonLines, verifyAuditChain } from "../infra/audit-log";
import { type CliCommand, EXIT, parseSubcommandArgs, UsageError } from "./command";
import { openMigratedDb } from "./open-db";

const USAGE = `usage: npm run toolstore -- audit verify
       npm run toolstore -- audit export [--action <prefix>] [--actor <name>] [--since <ISO time>]

verify  checks that every entry of the audit log still hashes to its stored hash and follows the
        one before it; prints the first broken entry and exits 1 if one does not.
export  prints the entries, oldest first, as JSON lines (hashes included, so a copy can be
        verified later).`;

export const auditCommand: CliCommand = {
  name: "audit",
  summary: "verify the audit log's hash chain, or export it as JSON lines",
  usage: USAGE,
  async run(args, io) {
    const { values, subcommand: sub } = parseSubcommandArgs("audit", args, ["verify", "export"], {
      action: { type: "string" },
      actor: { type: "string" },
      since: { type: "string" },
    });
    const db = await openMigratedDb();
    try {
      if (sub === "verify") {
        const verdict = await verifyAuditChain(db);
        if (verdict.ok) {
          io.out(`audit log intact: ${verdict.entries} entries, head ${verdict.headHash.slice(0, 16)}`);
          return EXIT.ok;
        }
        io.out(
          `audit log BROKEN at entry #${verdict.brokenSeq}${verdict.brokenId ? ` (id ${verdict.brokenId})` : ""}: ${verdict.problem}; ${verdict.entries} entries before it verify`,
        );
        return EXIT.failed;
      }
      const since = values.since ? new Date(values.since) : undefined;
      if (since && Number.isNaN(since.getTime()))
        throw new UsageError(`--since ${values.since} is not a time`);
      for await (const line of exportAuditJsonLines(db, {
        action: values.action,
        actor: values.actor,
        from: since,
      })) {
        io.out(line.trimEnd());
      }
      return EXIT.ok;
    } finally {
      await db.$disconnect();
    }
  },
};
