/**
 * Skills in the database: folder sync at start (broken skills reported, others load), versions
 * by content hash, uploads as a folder or a zip, the SkillStore the module reads, diffs, removal.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../../db";
import { deployMigrations } from "../../db/migrate";
import {
  createPrismaSkillStore,
  diffSkillVersions,
  filesFromZip,
  getSkillForConsole,
  listSkillsForConsole,
  publishSkill,
  readSkillFileForConsole,
  removeSkill,
  unwrapSkillFolder,
} from "./index";
import { loadSkillsFolder } from "./sync-skills";

const SKILLS = path.resolve(import.meta.dirname, "../../../skills");
const dir = mkdtempSync(path.join(tmpdir(), "toolstore-skills-"));
const enc = (s: string) => new TextEncoder().encode(s);
let db: Db;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "t.db") };
  await deployMigrations(target);
  db = createDb(target);
});

afterAll(async () => {
  await db.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe("skills in the database", () => {
  it("loads the shipped folder at start; a broken skill is reported with file:line and skipped", async () => {
    const root = path.join(dir, "skills");
    cpSync(SKILLS, root, { recursive: true });
    cpSync(path.join(root, "csv-tables"), path.join(root, "broken"), { recursive: true });
    writeFileSync(path.join(root, "broken", "SKILL.md"), "---\nname: broken\n---\nNo description.\n");
    const lines: string[] = [];
    const summary = await loadSkillsFolder(db, root, (l) => lines.push(l));
    expect(summary).toBe(`skills from ${root}: 3 loaded (3 new), 1 failed: broken`);
    expect(lines.join("\n")).toMatch(
      /broken\/SKILL\.md:3: the frontmatter has no `description` \(fix: add `description:/,
    );
    expect(await loadSkillsFolder(db, root, () => {})).toBe(
      `skills from ${root}: 3 loaded (3 unchanged), 1 failed: broken`,
    );
  });

  it("serves the current version to toolstore/skills through the SkillStore", async () => {
    const store = createPrismaSkillStore(db);
    expect((await store.list()).map((s) => [s.name, s.fileCount])).toEqual([
      ["csv-tables", 4],
      ["internal-comms", 4],
      ["toolset-authoring", 2],
    ]);
    const comms = await store.get("internal-comms");
    expect(comms?.body).toMatch(/^## When to use this skill/);
    expect(comms?.frontmatter.license).toBe("Complete terms in LICENSE.txt");
    const file = await store.readFile("internal-comms", "examples/general-comms.md");
    expect(new TextDecoder().decode(file?.bytes)).toMatch(/Use active voice/);
    expect(await store.readFile("internal-comms", "../csv-tables/SKILL.md")).toBeNull();
  });

  it("an upload with changed content is a new version; equal content is unchanged; diffs show the files", async () => {
    const files = [
      { path: "notes/SKILL.md", bytes: enc("---\nname: notes\ndescription: Take notes.\n---\nv1 body\n") },
      { path: "notes/refs/a.md", bytes: enc("one\n") },
      { path: "notes/.DS_Store", bytes: enc("junk") },
    ];
    const first = unwrapSkillFolder(files);
    expect(first.name).toBe("notes");
    expect(first.files.map((f) => f.path)).toEqual(["SKILL.md", "refs/a.md"]);
    expect(await publishSkill(db, { ...first, origin: "upload" })).toMatchObject({
      status: "created",
      version: 1,
    });
    expect(await publishSkill(db, { ...first, origin: "upload" })).toMatchObject({
      status: "unchanged",
      version: 1,
    });

    const zip = zipSync({
      "notes/SKILL.md": enc("---\nname: notes\ndescription: Take better notes.\n---\nv2 body\n"),
      "notes/refs/b.md": enc("two\n"),
    });
    const second = unwrapSkillFolder(filesFromZip(zip));
    expect(await publishSkill(db, { ...second, origin: "upload" })).toMatchObject({
      status: "updated",
      version: 2,
    });

    const detail = await getSkillForConsole(db, "notes");
    expect(detail).toMatchObject({ version: 2, description: "Take better notes.", current: true });
    expect(detail.versions.map((v) => v.version)).toEqual([2, 1]);
    const diff = await diffSkillVersions(db, "notes", 1, 2);
    expect(diff.map((d) => [d.path, d.change])).toEqual([
      ["SKILL.md", "changed"],
      ["refs/a.md", "removed"],
      ["refs/b.md", "added"],
    ]);
    expect(diff[0]?.patch).toMatch(/-v1 body\n\+v2 body/);
    expect((await readSkillFileForConsole(db, "notes", "refs/a.md", 1)).text).toBe("one\n");
    expect(await listSkillsForConsole(db, "better")).toMatchObject([{ name: "notes", version: 2 }]);
  });

  it("refuses zips that climb out of the folder or exceed the limits", async () => {
    const evil = zipSync({
      "SKILL.md": enc("---\nname: evil\ndescription: d\n---\n"),
      "../escape.txt": enc("x"),
    });
    const files = unwrapSkillFolder(filesFromZip(evil), "evil");
    await expect(publishSkill(db, { ...files, origin: "upload" })).rejects.toMatchObject({
      code: "SKILL_INVALID",
      details: { errors: [expect.objectContaining({ file: "../escape.txt" })] },
    });
    const big = zipSync({ "SKILL.md": enc("x"), "big.bin": new Uint8Array(64) });
    expect(() => filesFromZip(big, { maxFiles: 10, maxFileBytes: 32, maxTotalBytes: 1000 })).toThrow(
      /more than a skill may/,
    );
    expect(() => filesFromZip(enc("not a zip"))).toThrow(/not a readable zip/);
  });

  it("removes a skill with its versions", async () => {
    await removeSkill(db, "notes");
    await expect(getSkillForConsole(db, "notes")).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await db.skillFile.count({ where: { path: "refs/b.md" } })).toBe(0);
  });
});
