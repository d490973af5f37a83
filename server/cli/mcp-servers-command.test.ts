/**
 * `mcp-servers` against a real stdio server (server-memory, started with node) and a real
 * database: import, add, list, show, categorize, secret, remove, with their errors.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";

const dir = mkdtempSync(path.join(tmpdir(), "toolstore-cli-mcp-"));
// This file's process gets its own database (vitest runs each file in its own fork).
process.env.DATABASE_URL = `file:${path.join(dir, "cli.db")}`;
const MEMORY = path.resolve(
  import.meta.dirname,
  "../../node_modules/@modelcontextprotocol/server-memory/dist/index.js",
);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (t) => out.push(t), err: (t) => err.push(t), cwd: dir });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("[CLI] mcp-servers", () => {
  it("imports a standard mcpServers file and lists the tools pending with proposals", async () => {
    writeFileSync(
      path.join(dir, "claude.json"),
      JSON.stringify({
        mcpServers: {
          memory: {
            command: process.execPath,
            args: [MEMORY],
            env: { MEMORY_FILE_PATH: path.join(dir, "m.jsonl") },
          },
          remote: {
            url: "http://127.0.0.1:9/mcp",
            headers: { Authorization: "Bearer {{secret:REMOTE_TOKEN}}" },
          },
        },
      }),
    );
    const result = await cli("mcp-servers", "import", "claude.json");
    expect(result.out).toContain("added memory (stdio)");
    expect(result.out).toContain("added remote (http)");
    expect(result.out).toMatch(/read_graph \[pending; proposed read\]/);
    expect(result.out).toMatch(/create_entities \[pending; proposed write\]/);
    // The HTTP one cannot be reached: saved, with the fix named.
    expect(result.code).toBe(1);
    expect(result.err).toMatch(
      /remote: saved, but not reachable: .*REMOTE_TOKEN.*not set.*mcp-servers secret remote/,
    );
  }, 60_000);

  it("categorize accepts by glob; show prints categories, status and stderr", async () => {
    const cat = await cli("mcp-servers", "categorize", "memory", "read_*=proposed", "search_nodes=read");
    expect(cat.code).toBe(0);
    expect(cat.out).toContain("accepted read_graph as read (memory.read_graph)");
    expect(cat.out).toContain("accepted search_nodes as read (memory.search_nodes)");
    const show = await cli("mcp-servers", "show", "memory");
    expect(show.out).toMatch(/^memory \(stdio\) /);
    expect(show.out).toContain("read_graph [read]");
    expect(show.out).toMatch(
      /create_entities \[pending; proposed write\] {2}— new tool: waiting for an admin/,
    );
    const list = await cli("mcp-servers", "list");
    expect(list.out).toMatch(/memory\s+stdio\s+\S+\s+2\/9 tool\(s\) accepted/);
    expect(list.out).toMatch(/remote\s+http\s+error/);
  });

  it("prints clear errors", async () => {
    expect((await cli("mcp-servers", "categorize", "memory", "read_graph=maybe")).err).toMatch(
      /is not <tool-glob>=<category>/,
    );
    expect((await cli("mcp-servers", "categorize", "memory", "nothing*=read")).err).toMatch(
      /no tool of "memory" matches "nothing\*" \(tools: /,
    );
    expect((await cli("mcp-servers", "show", "nope")).err).toMatch(
      /no MCP server named "nope" \(known: memory, remote\)/,
    );
    const both = await cli("mcp-servers", "add", "x", "--command", "a", "--url", "http://b");
    expect(both).toMatchObject({ code: 2, err: expect.stringMatching(/exactly one of --command or --url/) });
    const dup = await cli("mcp-servers", "add", "memory", "--command", "node", "--no-connect");
    expect(dup.err).toMatch(/an MCP server named "memory" exists/);
    const missing = await cli("mcp-servers", "add", "ghost", "--command", "no-such-binary-xyz");
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/ghost: saved, but not reachable: .*no-such-binary-xyz.*not found on PATH/);
    expect((await cli("mcp-servers", "frobnicate")).err).toMatch(/unknown subcommand "frobnicate"/);
  }, 30_000);

  it("sets a secret without echoing it, and removes a server", async () => {
    const set = await cli("mcp-servers", "secret", "remote", "REMOTE_TOKEN=abcdefgh12345");
    expect(set.out).toBe("set secret REMOTE_TOKEN of remote");
    const show = await cli("mcp-servers", "show", "remote");
    expect(show.out).toContain("secrets: REMOTE_TOKEN (values hidden)");
    expect(show.out).not.toContain("abcdefgh12345");
    expect((await cli("mcp-servers", "remove", "remote")).out).toBe("removed remote");
    expect((await cli("mcp-servers", "list")).out).not.toContain("remote");
  });
});
