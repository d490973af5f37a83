import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "./run-cli";

function capture(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t), cwd }, out, err };
}

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("[CLI] validate-toolset", () => {
  it("passes on the toolsets folder and lists each binding", async () => {
    const { io, out } = capture(ROOT);
    expect(await runCli(["validate-toolset", "toolsets", "--no-typecheck"], io)).toBe(0);
    expect(out.join("\n")).toMatch(/✓ toolsets\/weather: 3 binding\(s\)\n {4}find_place \[external\]/);
  });

  it("exits 1 with file:line messages for a broken toolset", async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), "cli-")), "broken");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "doc.md"), "# broken\n");
    writeFileSync(
      path.join(dir, "toolset.ts"),
      "/** When.\n * @tool read */\nexport function when(at: Date) { return at; }\n",
    );
    const { io, out, err } = capture(path.dirname(dir));
    expect(await runCli(["validate-toolset", "broken"], io)).toBe(1);
    expect(err.join("\n")).toContain(
      "broken/toolset.ts:3:26: error: parameter `at` of `when` has type `Date`, which JSON cannot carry\n    fix: write `string`",
    );
    expect(out).toEqual(["✗ broken: 1 error(s), 0 warning(s)"]);
  });

  it("exits 2 with usage on a wrong invocation", async () => {
    const { io, err } = capture(ROOT);
    expect(await runCli(["validate-toolset"], io)).toBe(2);
    expect(err.join("\n")).toContain("usage: npm run toolstore -- validate-toolset");
    expect(await runCli(["no-such-command"], io)).toBe(2);
  });
});

describe("[CLI] migrate-api", () => {
  it("writes a toolset folder that validates, and refuses to overwrite without --force", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "cli-"));
    writeFileSync(
      path.join(cwd, "legacy.json"),
      JSON.stringify({
        name: "lookup_user",
        type: "api",
        endpoint: "https://users.example.com/users/:id",
        method: "GET",
        parameters: [{ name: "id", type: "string", description: "User id", required: true }],
      }),
    );
    const { io, out } = capture(cwd);
    expect(await runCli(["migrate-api", "legacy.json"], io)).toBe(0);
    expect(out[0]).toBe(
      "✓ wrote toolsets/lookup_user/ (toolset.ts, doc.md): GET https://users.example.com/users/:id",
    );
    expect(readFileSync(path.join(cwd, "toolsets/lookup_user/toolset.ts"), "utf8")).toContain(
      'const PATH = "/users/{id}";',
    );
    const again = capture(cwd);
    expect(await runCli(["validate-toolset", "toolsets/lookup_user"], again.io)).toBe(0);
    expect(await runCli(["migrate-api", "legacy.json"], again.io)).toBe(1);
    expect(again.err.join("\n")).toContain("toolsets/lookup_user exists; pass --force");
    expect(
      await runCli(
        ["migrate-api", "legacy.json", "--out", "elsewhere/users", "--category", "read"],
        again.io,
      ),
    ).toBe(0);
    expect(existsSync(path.join(cwd, "elsewhere/users/doc.md"))).toBe(true);
  });

  it("explains a definition it cannot migrate", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "cli-"));
    writeFileSync(
      path.join(cwd, "bad.json"),
      JSON.stringify({ name: "x", type: "api", endpoint: "https://x.example", method: "GET", parameters: 3 }),
    );
    const { io, err } = capture(cwd);
    expect(await runCli(["migrate-api", "bad.json"], io)).toBe(1);
    expect(err[0]).toContain("migrate-api: legacy API definition: `parameters` must be a JSON Schema object");
  });
});
