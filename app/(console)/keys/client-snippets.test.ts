import { describe, expect, it } from "vitest";
import { snippetText } from "./client-snippets";

describe("client snippets", () => {
  it("puts the key in the HTTP config's Authorization header", () => {
    const config = JSON.parse(snippetText("http", "tsk_1", "https://ts.example", "/srv/ts"));
    expect(config.mcpServers.toolstore).toEqual({
      type: "http",
      url: "https://ts.example/api/mcp",
      headers: { Authorization: "Bearer tsk_1" },
    });
  });

  it("quotes a project folder the shell would split, and leaves a plain one alone", () => {
    expect(snippetText("stdio", "k", "", "/srv/ts")).toBe(
      "cd /srv/ts\nTOOLSTORE_API_KEY=k npm run toolstore -- mcp",
    );
    expect(snippetText("stdio", "k", "", "/home/a b/it's")).toContain(`cd '/home/a b/it'\\''s'`);
  });

  it("runs the stdio JSON config with npm --prefix and the key in its env", () => {
    const config = JSON.parse(snippetText("stdio-json", "k", "", "/srv/ts"));
    expect(config.mcpServers.toolstore.args.slice(0, 2)).toEqual(["--prefix", "/srv/ts"]);
    expect(config.mcpServers.toolstore.env).toEqual({ TOOLSTORE_API_KEY: "k" });
  });
});
