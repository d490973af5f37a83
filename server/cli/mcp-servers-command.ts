/**
 * `mcp-servers <import|add|list|show|categorize|secret|refresh|remove>`: register external MCP
 * servers, review their tools' categories, and remove them. Changes are rows in the database, so
 * a running ToolStore picks them up within seconds on every instance. `add` and `import` reach
 * each server once to list its tools for review (skip with --no-connect).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Db } from "../db";
import { createPrismaAssetStore } from "../infra/run-stores";
import { createWriteBatcher } from "../infra/write-batcher";
import {
  categorizeTools,
  createMcpModuleSource,
  getServer,
  listServers,
  type McpServerDetail,
  parseCategorizeRule,
  parseMcpServersJson,
  removeServer,
  saveServer,
  setServerSecret,
} from "../modules/mcp-servers";
import {
  AppError,
  type CliCommand,
  type CliIo,
  EXIT,
  parseCommandArgs,
  requireArg,
  UsageError,
} from "./command";
import { openMigratedDb } from "./open-db";

const USAGE = `usage: npm run toolstore -- mcp-servers <subcommand> ...

  import <file.json> [--replace] [--no-connect]
                      register every server of a standard { "mcpServers": { ... } } file
                      (Claude Desktop, Cursor, Claude Code)
  add <name> --command <cmd> [--arg A]... [--env K=V]... [--secret NAME=VALUE]...
  add <name> --url <url> [--header K=V]... [--secret NAME=VALUE]...
                      [--timeout <ms>] [--replace] [--no-connect]
                      an env or header value may name a secret: "Bearer {{secret:TOKEN}}"
  list                one line per server: status, tools accepted/pending
  show <name>         tools with proposed and accepted categories, status, last error, stderr
  categorize <name> '<tool-glob>=<category>'...
                      accept or set categories (read, write, execute, external, or
                      "proposed" to accept each tool's proposal), e.g. 'read_*=read' '*=proposed'
  secret <name> NAME=VALUE   set a secret the server's env or headers name
  refresh <name>      reach the server now and list its tools again
  remove <name>       remove the server; its tools stop being importable`;

function pairs(values: string[] | undefined, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values ?? []) {
    const at = v.indexOf("=");
    if (at < 1) throw new UsageError(`${flag} takes K=V, got "${v}"`);
    out[v.slice(0, at)] = v.slice(at + 1);
  }
  return out;
}

/** Reaches a server once to list its tools, then stops it. Failures go to the server's status. */
async function connectOnce(db: Db, name: string, io: CliIo): Promise<boolean> {
  const source = createMcpModuleSource({
    db,
    assets: createPrismaAssetStore(db, createWriteBatcher(db)),
    cwd: io.cwd,
  });
  try {
    await source.refresh(name);
    return true;
  } catch (error) {
    io.err(
      `${name}: saved, but not reachable: ${(error as Error).message.replace(/^MCP server "[^"]+": /, "")}`,
    );
    return false;
  } finally {
    await source.close();
  }
}

function showText(s: McpServerDetail): string {
  const lines = [
    `${s.name} (${s.transport}) ${s.target}`,
    `  status: ${s.status}${s.enabled ? "" : " (disabled)"}${s.lastError ? `\n  last error: ${s.lastError}` : ""}`,
    `  call timeout: ${s.callTimeoutMs} ms`,
  ];
  if (s.transport === "stdio" && Object.keys(s.env).length)
    lines.push(
      `  env: ${Object.entries(s.env)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}`,
    );
  if (s.transport === "http" && Object.keys(s.headers).length)
    lines.push(
      `  headers: ${Object.entries(s.headers)
        .map(([k, v]) => `${k}: ${v}`)
        .join("; ")}`,
    );
  if (s.secrets.length) lines.push(`  secrets: ${s.secrets.join(", ")} (values hidden)`);
  if (s.missingSecrets.length)
    lines.push(
      `  missing secrets: ${s.missingSecrets.join(", ")} (set with: mcp-servers secret ${s.name} NAME=VALUE)`,
    );
  for (const p of s.problems) lines.push(`  problem: ${p}`);
  lines.push(`  tools (${s.accepted} accepted, ${s.pending} not importable):`);
  if (s.toolList.length === 0)
    lines.push(
      s.toolsSyncedAt ? "    (the server lists no tools)" : "    (not reached yet: run mcp-servers refresh)",
    );
  for (const t of s.toolList) {
    const cat =
      t.status === "accepted"
        ? `[${t.effectiveCategory ?? t.acceptedCategory}]`
        : `[${t.status}; proposed ${t.proposedCategory ?? "none"}]`;
    const renamed = t.exportName === t.name ? "" : ` (export ${t.exportName})`;
    lines.push(`    ${t.name}${renamed} ${cat}${t.reason ? `  — ${t.reason}` : ""}`);
  }
  if (s.stderrTail.trim()) {
    lines.push("  stderr (last lines):");
    for (const l of s.stderrTail.trimEnd().split("\n").slice(-10)) lines.push(`    ${l}`);
  }
  return lines.join("\n");
}

export const mcpServersCommand: CliCommand = {
  name: "mcp-servers",
  summary: "register external MCP servers (import, add), review tool categories, list, show, remove",
  usage: USAGE,
  async run(args, io) {
    const [sub, ...rest] = args;
    const { values, positionals } = parseCommandArgs(rest, {
      command: { type: "string" },
      arg: { type: "string", multiple: true },
      env: { type: "string", multiple: true },
      url: { type: "string" },
      header: { type: "string", multiple: true },
      secret: { type: "string", multiple: true },
      timeout: { type: "string" },
      replace: { type: "boolean" },
      "no-connect": { type: "boolean" },
      json: { type: "boolean" },
    });
    if (!sub) throw new UsageError("missing subcommand");
    const known = ["import", "add", "list", "show", "categorize", "secret", "refresh", "remove"];
    if (!known.includes(sub))
      throw new UsageError(`unknown subcommand "${sub}" (one of ${known.join(", ")})`);
    const db = await openMigratedDb();
    try {
      switch (sub) {
        case "import": {
          const file = path.resolve(io.cwd, requireArg(positionals[0], "<file.json>"));
          let text: string;
          try {
            text = readFileSync(file, "utf8");
          } catch (error) {
            throw new AppError("NOT_FOUND", `cannot read ${file}: ${(error as Error).message}`);
          }
          const servers = parseMcpServersJson(text);
          if (servers.length === 0)
            throw new AppError("BAD_INPUT", `${file} lists no servers under "mcpServers"`);
          let failed = false;
          for (const server of servers) {
            const saved = await saveServer(db, server, { replace: values.replace === true });
            io.out(`${saved.created ? "added" : "replaced"} ${saved.name} (${server.transport})`);
          }
          if (!values["no-connect"]) {
            for (const server of servers) {
              if (!server.enabled) continue;
              if (await connectOnce(db, server.name, io)) io.out(showText(await getServer(db, server.name)));
              else failed = true;
            }
          }
          return failed ? EXIT.failed : EXIT.ok;
        }
        case "add": {
          const name = requireArg(positionals[0], "<name>");
          if (!values.command === !values.url) throw new UsageError("give exactly one of --command or --url");
          const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
          if (timeout !== undefined && !Number.isInteger(timeout))
            throw new UsageError("--timeout takes milliseconds");
          const saved = await saveServer(
            db,
            {
              name,
              transport: values.url ? "http" : "stdio",
              ...(values.command ? { command: values.command } : {}),
              args: values.arg ?? [],
              env: pairs(values.env, "--env"),
              ...(values.url ? { url: values.url } : {}),
              headers: pairs(values.header, "--header"),
              secrets: pairs(values.secret, "--secret"),
              ...(timeout !== undefined ? { callTimeoutMs: timeout } : {}),
            },
            { replace: values.replace === true },
          );
          io.out(`${saved.created ? "added" : "replaced"} ${name}`);
          if (values["no-connect"]) return EXIT.ok;
          if (!(await connectOnce(db, name, io))) return EXIT.failed;
          io.out(showText(await getServer(db, name)));
          io.out(`accept categories with: npm run toolstore -- mcp-servers categorize ${name} '*=proposed'`);
          return EXIT.ok;
        }
        case "list": {
          const list = await listServers(db);
          if (values.json) {
            io.out(JSON.stringify(list, null, 2));
            return EXIT.ok;
          }
          if (list.length === 0)
            io.out(
              "no MCP servers yet; add one: npm run toolstore -- mcp-servers add <name> --command <cmd> (or import <file.json>)",
            );
          for (const s of list) {
            io.out(
              `${s.name.padEnd(16)} ${s.transport.padEnd(5)} ${s.status.padEnd(12)} ${s.accepted}/${s.tools} tool(s) accepted  ${s.target}${s.lastError ? `  — ${s.lastError}` : ""}`,
            );
          }
          return EXIT.ok;
        }
        case "show": {
          const detail = await getServer(db, requireArg(positionals[0], "<name>"));
          io.out(values.json ? JSON.stringify(detail, null, 2) : showText(detail));
          return EXIT.ok;
        }
        case "categorize": {
          const name = requireArg(positionals[0], "<name>");
          const rules = positionals.slice(1).map(parseCategorizeRule);
          if (rules.length === 0) throw new UsageError("give at least one '<tool-glob>=<category>'");
          const result = await categorizeTools(db, name, rules, null);
          for (const a of result.accepted) io.out(`accepted ${a.tool} as ${a.category} (${a.capability})`);
          for (const s of result.skipped) io.err(`skipped ${s.tool}: ${s.reason}`);
          return result.skipped.length && !result.accepted.length ? EXIT.failed : EXIT.ok;
        }
        case "secret": {
          const name = requireArg(positionals[0], "<name>");
          const set = pairs(positionals.slice(1), "the secret");
          if (Object.keys(set).length === 0) throw new UsageError("give NAME=VALUE");
          for (const [k, v] of Object.entries(set)) {
            await setServerSecret(db, name, k, v);
            io.out(`set secret ${k} of ${name}`);
          }
          return EXIT.ok;
        }
        case "refresh": {
          const name = requireArg(positionals[0], "<name>");
          await getServer(db, name);
          if (!(await connectOnce(db, name, io))) return EXIT.failed;
          io.out(showText(await getServer(db, name)));
          return EXIT.ok;
        }
        default: {
          const name = requireArg(positionals[0], "<name>");
          await removeServer(db, name);
          io.out(`removed ${name}`);
          return EXIT.ok;
        }
      }
    } finally {
      await db.$disconnect();
    }
  },
};
