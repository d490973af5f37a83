import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";

const dir = mkdtempSync(path.join(tmpdir(), "toolstore-cli-db-"));
// This file's process gets its own database (vitest runs each file in its own fork).
process.env.DATABASE_URL = `file:${path.join(dir, "cli.db")}`;
const TOOLSETS = path.resolve(import.meta.dirname, "../../toolsets");
cpSync(TOOLSETS, path.join(dir, "toolsets"), { recursive: true });

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (t) => out.push(t), err: (t) => err.push(t), cwd: dir });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("[CLI] publish-toolset, sync-toolsets, toolsets, toolset-env, toolset-settings", () => {
  it("publishes a folder, and republishing the same content is a no-op with a message", async () => {
    const first = await cli("publish-toolset", "toolsets/webhook");
    expect(first.code).toBe(0);
    expect(first.out).toMatch(
      /^published webhook v1 \(hash [0-9a-f]{12}\), 1 binding\(s\)\n {2}\+ send \[write\]/,
    );
    const again = await cli("publish-toolset", "toolsets/webhook");
    expect(again).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^webhook is already at v1 \(hash [0-9a-f]{12}\); nothing published$/),
    });
  });

  it("republishing with a changed signature prints the diff", async () => {
    const file = path.join(dir, "toolsets/webhook/toolset.ts");
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(
        "data: unknown = null)",
        'data: unknown = null, priority: "low" | "high" = "low")',
      ),
    );
    const result = await cli("publish-toolset", "toolsets/webhook");
    expect(result.code).toBe(0);
    expect(result.out).toContain("published webhook v2");
    expect(result.out).toContain(
      '~ send signature:\n      was: send({ event: string, data?: unknown = null })\n      now: send({ event: string, data?: unknown = null, priority?: "low" | "high" = "low" })',
    );
    expect(result.out).toContain("grants and allow rules bound to the previous version no longer apply");
    const diff = await cli("toolsets", "webhook", "--diff", "1");
    expect(diff.out).toContain("webhook v1 -> v2\n  ~ send signature:");
  });

  it("refuses a broken folder with file:line errors and exit code 1", async () => {
    const file = path.join(dir, "toolsets/webhook/toolset.ts");
    const good = readFileSync(file, "utf8");
    writeFileSync(file, good.replace("@tool write", "@tool writes"));
    const result = await cli("publish-toolset", "toolsets/webhook");
    expect(result.code).toBe(1);
    expect(result.err).toMatch(
      /toolsets\/webhook\/toolset\.ts:\d+:\d+: error: @tool on `send` has unknown category `writes`/,
    );
    writeFileSync(file, good);
  });

  // textkit is Python: its first parse starts a Pyodide worker (seconds on a loaded machine).
  it("syncs the folder and lists the toolsets", { timeout: 180_000 }, async () => {
    const sync = await cli("sync-toolsets", "toolsets");
    expect(sync.code).toBe(0);
    expect(sync.out).toContain(`toolsets from ${path.join(dir, "toolsets")}: 7 loaded (6 new, 1 unchanged)`);
    const list = await cli("toolsets");
    expect(list.out.split("\n").map((l) => l.split(/\s+/)[0])).toEqual([
      "calculator",
      "chart",
      "lisp",
      "textkit",
      "units",
      "weather",
      "webhook",
    ]);
    expect(list.out).toContain("missing env: WEBHOOK_URL, WEBHOOK_TOKEN");
  });

  it("sets env vars and secrets without ever printing a secret; changes settings", async () => {
    expect((await cli("toolset-env", "webhook", "set", "WEBHOOK_TOKEN", "tok-123456")).out).toBe(
      "webhook: WEBHOOK_TOKEN (secret) = ••••••••",
    );
    expect((await cli("toolset-env", "webhook", "set", "WEBHOOK_URL", "http://127.0.0.1:9/hook")).out).toBe(
      "webhook: WEBHOOK_URL = http://127.0.0.1:9/hook",
    );
    const shown = await cli("toolsets", "webhook");
    expect(shown.out).toContain("WEBHOOK_TOKEN (secret) = ••••••••");
    expect(shown.out).not.toContain("tok-123456");
    expect((await cli("toolsets", "webhook", "--json")).out).not.toContain("tok-123456");
    const settings = await cli("toolset-settings", "webhook", "--timeout", "3000", "--add-host", "127.0.0.1");
    expect(settings.out).toBe("webhook: timeout 3000 ms; allowed hosts: 127.0.0.1");
    const bad = await cli("toolset-settings", "webhook", "--hosts", "http://x/");
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("not a host name: http://x/");
    expect((await cli("toolset-env", "webhook", "unset", "WEBHOOK_URL")).out).toBe(
      "webhook: WEBHOOK_URL unset",
    );
  });
});
