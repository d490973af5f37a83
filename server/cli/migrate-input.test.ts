import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseSubcommandArgs, UsageError } from "./command";
import { readMigrateInput } from "./migrate-input";

const dir = mkdtempSync(path.join(tmpdir(), "toolstore-migrate-input-"));
const io = { out() {}, err() {}, cwd: dir };
writeFileSync(path.join(dir, "legacy.json"), JSON.stringify({ name: "weather", type: "api" }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("[CLI] migrate options", () => {
  it("reads the definition and the options both migrate commands take", () => {
    expect(readMigrateInput(["legacy.json", "--category", "read", "--force"], io)).toEqual({
      definition: { name: "weather", type: "api" },
      category: "read",
      force: true,
      python: false,
    });
    expect(readMigrateInput(["legacy.json", "--python"], io, { python: true }).python).toBe(true);
  });

  it("refuses a bad category, --python where it is not offered, and an unreadable file", () => {
    expect(() => readMigrateInput(["legacy.json", "--category", "admin"], io)).toThrow(
      /--category must be one of read, write, execute, external/,
    );
    expect(() => readMigrateInput(["legacy.json", "--python"], io)).toThrow(UsageError);
    expect(() => readMigrateInput([], io)).toThrow(/missing <file.json>/);
    expect(() => readMigrateInput(["nope.json"], io)).toThrow(/cannot read .*nope\.json/);
  });
});

describe("[CLI] subcommands", () => {
  it("names the subcommand given, or an unknown one", () => {
    const parsed = parseSubcommandArgs("audit", ["export", "--actor", "ada"], ["verify", "export"], {
      actor: { type: "string" },
    });
    expect([parsed.subcommand, parsed.values.actor]).toEqual(["export", "ada"]);
    expect(() => parseSubcommandArgs("audit", ["frob"], ["verify"], {})).toThrow(
      'unknown audit subcommand "frob"',
    );
    expect(() => parseSubcommandArgs("keys", [], ["create"], {})).toThrow('unknown keys subcommand ""');
  });
});
