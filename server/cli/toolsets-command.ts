/**
 * `toolsets [<name>]`: list the published toolsets, or show one (bindings, settings, environment
 * with secrets masked, capabilities, versions); `--diff <from> [--to <n>]` shows what changed.
 */
import { diffStoredVersions, getToolset, listToolsets } from "../modules/toolsets";
import { type CliCommand, EXIT, parseCommandArgs, UsageError } from "./command";
import { openMigratedDb } from "./open-db";

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} takes a version number`);
  return n;
}

export const toolsetsCommand: CliCommand = {
  name: "toolsets",
  summary: "list published toolsets, or show one (bindings, settings, env, versions, diffs)",
  usage: `usage: npm run toolstore -- toolsets [<name>] [--diff <version> [--to <version>]] [--doc] [--json]

  (no name)       one line per toolset: version, bindings, categories, hosts, missing env
  <name>          bindings with signatures and categories, settings, environment (secrets
                  masked), pending category changes, versions
  --diff <v>      what changed from version <v> to the current one (or to --to <v>)
  --doc           print the toolset's doc.md
  --json          machine-readable output`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      diff: { type: "string" },
      to: { type: "string" },
      doc: { type: "boolean" },
      json: { type: "boolean" },
    });
    const name = positionals[0];
    const from = positiveInt(values.diff, "--diff");
    const to = positiveInt(values.to, "--to");
    if ((from !== undefined || values.doc) && !name)
      throw new UsageError("--diff and --doc need a toolset name");
    const db = await openMigratedDb();
    try {
      if (!name) {
        const list = await listToolsets(db);
        if (values.json) {
          io.out(JSON.stringify(list, null, 2));
          return EXIT.ok;
        }
        if (list.length === 0) io.out("no toolsets published yet; run: npm run toolstore -- sync-toolsets");
        for (const t of list) {
          const extra = [
            t.missingEnv.length ? `missing env: ${t.missingEnv.join(", ")}` : "",
            t.pendingCategoryChanges ? `${t.pendingCategoryChanges} category change(s) waiting` : "",
          ].filter(Boolean);
          io.out(
            `${t.name.padEnd(16)} v${t.version ?? "-"}  ${t.bindingCount} binding(s) [${t.categories.join(", ")}]  ` +
              `hosts: ${t.allowedHosts.join(", ") || "none"}  timeout: ${t.timeoutMs} ms${extra.length ? `  (${extra.join("; ")})` : ""}`,
          );
        }
        return EXIT.ok;
      }
      if (from !== undefined) {
        const diff = await diffStoredVersions(db, name, from, to);
        if (values.json) io.out(JSON.stringify(diff, null, 2));
        else
          io.out(
            [
              `${name} v${diff.from} -> v${diff.to}`,
              ...diff.lines.flatMap((l) => l.split("\n")).map((l) => `  ${l}`),
            ].join("\n"),
          );
        return EXIT.ok;
      }
      const t = await getToolset(db, name);
      if (values.doc) {
        io.out(t.doc);
        return EXIT.ok;
      }
      if (values.json) {
        const { source: _source, ...rest } = t;
        io.out(JSON.stringify(rest, null, 2));
        return EXIT.ok;
      }
      const lines = [
        `${t.name} v${t.version ?? "-"} (hash ${t.contentHash?.slice(0, 12) ?? "-"}): ${t.description}`,
        `  timeout ${t.timeoutMs} ms; allowed hosts: ${t.allowedHosts.join(", ") || "none"}`,
        "  bindings:",
        ...t.bindings.map((b) => {
          const cap = t.capabilities.find((c) => c.exportName === b.name);
          const pending = cap?.pendingCategory
            ? ` (declared ${cap.pendingCategory}, waiting for an admin)`
            : "";
          return `    ${b.name} [${cap?.category ?? b.category}${pending}]  ${b.signature}`;
        }),
        "  environment:",
        ...(t.env.length
          ? t.env.map(
              (e) =>
                `    ${e.name}${e.secret ? " (secret)" : ""} = ${e.set ? e.display : "(not set)"}${e.description ? `  — ${e.description}` : ""}`,
            )
          : ["    (none)"]),
        "  versions:",
        ...t.versions.map(
          (v) =>
            `    v${v.version}  ${v.contentHash.slice(0, 12)}  ${v.origin}  ${v.createdAt.toISOString()}`,
        ),
      ];
      io.out(lines.join("\n"));
      return EXIT.ok;
    } finally {
      await db.$disconnect();
    }
  },
};
