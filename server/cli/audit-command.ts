/**
 * `audit verify`: recompute the audit log's hash chain, compare it with the last signed checkpoint,
 * and name the first broken entry or the missing tail (exit 1).
 * `audit export [--action a] [--actor name] [--since ISO]`: the entries as JSON lines on stdout,
 * then the chain head and checkpoint.
 */
import { exportAuditJsonLines } from "../infra/audit-log";
import { verifyAuditChain } from "../infra/audit-verify";
import { auditAnchorFor } from "../services/audit-anchor";
import { type CliCommand, EXIT, parseSubcommandArgs, UsageError } from "./command";
import { openMigratedDb } from "./open-db";

const USAGE = `usage: npm run toolstore -- audit verify
       npm run toolstore -- audit export [--action <prefix>] [--actor <name>] [--since <ISO time>]

verify  checks that every entry of the audit log still hashes to its stored hash and follows the
        one before it, and that the entries up to the last signed checkpoint (audit-checkpoint.json
        beside the secret key) are all there; prints the first broken entry or the missing tail and
        exits 1 if not.
export  prints the entries, oldest first, as JSON lines (hashes included, so a copy can be
        verified later), then one {"type":"audit-head"} line: the chain's newest seq and hash and
        the last checkpoint.`;

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
        const anchor = auditAnchorFor(db);
        const verdict = await verifyAuditChain(db, undefined, anchor ?? undefined);
        if (verdict.ok) {
          const cp = verdict.checkpoint;
          const anchored =
            typeof cp === "object"
              ? `; the checkpoint of ${cp.at} (seq ${cp.seq}) matches`
              : `; no checkpoint${anchor ? ` at ${anchor.file}` : " (no secret key)"}, so deleted newest entries would not show`;
          io.out(
            `audit log intact: ${verdict.entries} entries, head ${verdict.headHash.slice(0, 16)}${anchored}`,
          );
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
      const filter = { action: values.action, actor: values.actor, from: since };
      for await (const line of exportAuditJsonLines(db, filter, auditAnchorFor(db)?.file)) {
        io.out(line.trimEnd());
      }
      return EXIT.ok;
    } finally {
      await db.$disconnect();
    }
  },
};
