/**
 * `categories pending` lists every capability whose category waits for an admin, from every
 * source; `categories accept <capability> <category> --hash <h> --reason "..."` sets one at the
 * version listed (the one category-review flow, server/modules/category-review.ts).
 */
import { CATEGORIES, type Category } from "../core/capabilities/types";
import { auditLogFor, cliActor } from "../infra/audit-log";
import { SOURCE_PLUGINS } from "../modules";
import { acceptReview, listPendingReviews } from "../modules/category-review";
import { type CliCommand, EXIT, parseCommandArgs, requireArg, UsageError } from "./command";
import { openMigratedDb } from "./open-db";

const USAGE = `usage: npm run toolstore -- categories pending
       npm run toolstore -- categories accept <capability> <category> --hash <hash> --reason "<why>"

pending  every capability waiting for a category (republished toolsets, new or changed MCP tools),
         with the version hash to accept it at
accept   sets the category (${CATEGORIES.join(", ")}) of one waiting capability at that version;
         refused when the capability changed since`;

export const categoriesCommand: CliCommand = {
  name: "categories",
  summary: "list capabilities waiting for a category, or accept one at its version",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      hash: { type: "string" },
      reason: { type: "string" },
    });
    const [sub, capability, category] = positionals;
    if (sub !== "pending" && sub !== "accept")
      throw new UsageError(`unknown categories subcommand "${sub ?? ""}"`);
    const db = await openMigratedDb();
    try {
      if (sub === "pending") {
        const items = await listPendingReviews(db, SOURCE_PLUGINS);
        if (items.length === 0) io.out("nothing is waiting for a category");
        for (const item of items) {
          const now = item.current ? `now ${item.current}` : "not mountable yet";
          const proposed = item.proposed ? `proposed ${item.proposed}` : "nothing proposed";
          io.out(
            `${item.capability}  [${item.source}] ${now}, ${proposed}  --hash ${item.hash}\n  ${item.reason}`,
          );
        }
        return EXIT.ok;
      }
      const name = requireArg(capability, "<capability>");
      if (!category || !(CATEGORIES as readonly string[]).includes(category)) {
        throw new UsageError(`the category is one of ${CATEGORIES.join(", ")}, not "${category ?? ""}"`);
      }
      const input = {
        capability: name,
        category: category as Category,
        hash: requireArg(values.hash, "--hash (from categories pending)"),
        reason: requireArg(values.reason, "--reason"),
      };
      const item = await acceptReview(db, SOURCE_PLUGINS, null, input);
      await auditLogFor(db).append({
        actor: cliActor(),
        action: "capabilities.acceptReview",
        target: `capability:${name}`,
        after: { category: input.category, hash: input.hash },
        detail: { via: "cli", source: item.source, reason: input.reason },
      });
      io.out(`${name} is ${input.category} (version ${input.hash.slice(0, 12)})`);
      return EXIT.ok;
    } finally {
      await db.$disconnect();
    }
  },
};
