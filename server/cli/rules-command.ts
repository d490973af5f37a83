/**
 * `rules what-if <draft.json> [--last N] [--since ISO] [--until ISO] [--json]`: weighs a draft
 * change of the rules against the recorded calls and prints each call whose decision would
 * change; exit 1 when any would (so a script or CI can refuse the change).
 */
import fs from "node:fs";
import path from "node:path";
import { AppError } from "../core/errors";
import { whatIfRules } from "../services/rules-what-if";
import { type CliCommand, EXIT, parseSubcommandArgs, requireArg, UsageError } from "./command";
import { openMigratedDb } from "./open-db";

const USAGE = `usage: npm run toolstore -- rules what-if <draft.json> [--last N] [--since ISO] [--until ISO] [--json]

what-if  weighs a draft change of the policy rules against the last N recorded calls (default
         500; or those between --since and --until) and prints the calls whose decision would
         change (allow -> ask, ask -> deny, ...). Exits 1 when any would, 0 when none would.
         The draft uses the rule form's own fields:
           { "add": [{ "effect": "deny", "pattern": "counter.*", "conditions": [] }],
             "edit": [{ "id": "<ruleId>", "effect": "ask" }],
             "remove": ["<ruleId>"],
             "defaultMode": "default" }`;

function readDraft(file: string, cwd: string): unknown {
  const full = path.resolve(cwd, file);
  let text: string;
  try {
    text = fs.readFileSync(full, "utf8");
  } catch (error) {
    throw new AppError("BAD_INPUT", `cannot read the draft ${full}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AppError("BAD_INPUT", `the draft ${full} is not JSON: ${(error as Error).message}`);
  }
}

function positiveInt(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} ${text} is not a positive whole number`);
  return n;
}

function time(text: string | undefined, flag: string): Date | undefined {
  if (text === undefined) return undefined;
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) throw new UsageError(`${flag} ${text} is not a time`);
  return at;
}

export const rulesCommand: CliCommand = {
  name: "rules",
  summary: "what-if: which recorded calls a draft rule change would decide differently (exit 1 if any)",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals } = parseSubcommandArgs("rules", args, ["what-if"], {
      last: { type: "string" },
      since: { type: "string" },
      until: { type: "string" },
      json: { type: "boolean" },
    });
    const draft = readDraft(requireArg(positionals[1], "the draft file (draft.json)"), io.cwd);
    const last = positiveInt(values.last, "--last");
    const since = time(values.since, "--since");
    const until = time(values.until, "--until");
    const db = await openMigratedDb();
    const result = await whatIfRules(db, {
      draft: draft as never,
      ...(last ? { last } : {}),
      ...(since ? { since } : {}),
      ...(until ? { until } : {}),
    });
    if (values.json) {
      io.out(JSON.stringify(result, null, 2));
      return result.changed > 0 ? EXIT.failed : EXIT.ok;
    }
    const summary = result.transitions.map((t) => `${t.from} -> ${t.to}: ${t.count}`).join(", ");
    io.out(
      `${result.examined} recorded calls weighed; ${result.changed} would be decided differently${summary ? ` (${summary})` : ""}`,
    );
    if (result.withoutArgs > 0) {
      io.out(
        `${result.withoutArgs} of them were recorded without their arguments and were weighed with none`,
      );
    }
    for (const c of result.changes) {
      const args = c.args === null ? "(arguments not recorded)" : JSON.stringify(c.args);
      io.out(
        `${c.at.toISOString()}  ${c.capability}  ${c.before} -> ${c.after}  ${args.length > 200 ? `${args.slice(0, 197)}...` : args}${c.runId ? `  run ${c.runId}` : ""}`,
      );
      io.out(`    now: ${c.beforeReason}; with the draft: ${c.afterReason}`);
    }
    if (result.changed > result.changes.length) {
      io.out(`... and ${result.changed - result.changes.length} more (use --json or a shorter range)`);
    }
    return result.changed > 0 ? EXIT.failed : EXIT.ok;
  },
};
