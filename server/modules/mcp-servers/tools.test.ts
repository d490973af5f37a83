/** Export names, collisions, the pin hash, category proposals and the mcpServers import shape. */
import { describe, expect, it } from "vitest";
import { globMatches, parseCategorizeRule } from "./categorize";
import { parseMcpServersJson } from "./config";
import { resolveSecretPlaceholders } from "./secrets";
import { assignExportNames, exportNameFor, proposeCategory, toolHash } from "./tools";

describe("[MCP SERVERS] names and proposals", () => {
  it("maps tool names to JavaScript identifiers", () => {
    expect(exportNameFor("get-sum")).toBe("get_sum");
    expect(exportNameFor("a.b")).toBe("a_b");
    expect(exportNameFor("2fa")).toBe("_2fa");
    expect(exportNameFor("delete")).toBe("delete_");
    expect(exportNameFor("read_file")).toBe("read_file");
  });

  it("reports collisions on every tool involved, never merging them", () => {
    const named = assignExportNames(["get-sum", "get_sum", "echo"]);
    expect(named[0]?.collision).toMatch(/"get-sum" and "get_sum" all map to the export name "get_sum"/);
    expect(named[1]?.collision).toBeTruthy();
    expect(named[2]?.collision).toBeUndefined();
  });

  it("proposes categories from explicit annotations only", () => {
    expect(proposeCategory({ readOnlyHint: true }).category).toBe("read");
    expect(proposeCategory({ readOnlyHint: false, destructiveHint: true }).category).toBe("write");
    expect(proposeCategory({ readOnlyHint: true, openWorldHint: true }).category).toBe("external");
    expect(proposeCategory({ readOnlyHint: false, destructiveHint: false }).category).toBe("write");
    expect(proposeCategory({})).toEqual({ category: null, because: "the tool declares no annotations" });
  });

  it("pins a tool by name, description, schema and annotations", () => {
    const tool = { name: "t", description: "d", inputSchema: { type: "object" }, annotations: {} };
    expect(toolHash(tool)).toBe(toolHash({ ...tool }));
    expect(toolHash({ ...tool, description: "d2" })).not.toBe(toolHash(tool));
    expect(toolHash({ ...tool, annotations: { readOnlyHint: true } })).not.toBe(toolHash(tool));
    expect(toolHash({ ...tool, inputSchema: { type: "object", properties: { x: {} } } })).not.toBe(
      toolHash(tool),
    );
  });

  it("parses categorize rules and globs", () => {
    expect(parseCategorizeRule("read_*=read")).toEqual({ glob: "read_*", category: "read" });
    expect(() => parseCategorizeRule("read_*=maybe")).toThrow(/one of read, write, execute, external/);
    expect(globMatches("read_*", "read_graph")).toBe(true);
    expect(globMatches("read_*", "create_entities")).toBe(false);
  });
});

describe("[MCP SERVERS] configuration", () => {
  it("imports the standard mcpServers shape (stdio and HTTP)", () => {
    const servers = parseMcpServersJson(
      JSON.stringify({
        mcpServers: {
          memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env: { A: "1" } },
          remote: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer {{secret:T}}" } },
        },
      }),
    );
    expect(servers.map((s) => [s.name, s.transport, s.command ?? s.url])).toEqual([
      ["memory", "stdio", "npx"],
      ["remote", "http", "https://mcp.example.com/mcp"],
    ]);
    expect(servers[0]?.args).toEqual(["-y", "@modelcontextprotocol/server-memory"]);
  });

  it("names the server and field of a bad entry", () => {
    expect(() => parseMcpServersJson('{"mcpServers":{"Bad Name":{"command":"x"}}}')).toThrow(
      /server "Bad Name": name/,
    );
    expect(() => parseMcpServersJson('{"mcpServers":{"x":{}}}')).toThrow(
      /server "x": command: a stdio server needs a command/,
    );
    expect(() => parseMcpServersJson("{}")).toThrow(/expected an object/);
    expect(() => parseMcpServersJson("{nope")).toThrow(/not JSON/);
  });

  it("resolves secret placeholders only from stored secrets, naming a missing one", () => {
    const secrets = new Map([["T", "s3cret"]]);
    expect(resolveSecretPlaceholders({ Authorization: "Bearer {{secret:T}}" }, secrets, "remote")).toEqual({
      Authorization: "Bearer s3cret",
    });
    expect(() => resolveSecretPlaceholders({ X: "{{secret:MISSING}}" }, secrets, "remote")).toThrow(
      /names the secret "MISSING", which is not set/,
    );
  });
});
