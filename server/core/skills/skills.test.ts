/**
 * Skills in the core: SKILL.md frontmatter errors (file:line and a fix), path confinement
 * (`..`, absolute paths, symlinks), limits, and `toolstore/skills` through the gate, with
 * scripts run as nested actions in the real sandbox pool.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../actions/engine";
import { builtinModules } from "../capabilities/builtins";
import { createSandboxPool, type SandboxPool } from "../sandbox/pool";
import { createCanaryModule, sessionInMode } from "../testing/fixtures";
import { createMemoryPorts, type MemoryPorts } from "../testing/memory-ports";
import {
  createMemorySkillStore,
  createSandboxScriptRunner,
  createSkillCatalogSource,
  createSkillsModule,
  listSkillFolders,
  loadSkillFromFiles,
  type ParsedSkill,
  parseSkillMarkdown,
  READ_CAP_CHARS,
  readSkillFolder,
  type SkillFileInput,
} from ".";

const enc = (s: string) => new TextEncoder().encode(s);
const file = (p: string, text: string): SkillFileInput => ({ path: p, bytes: enc(text) });
const md = (front: string, body = "# Body\n\nDo the thing.\n") => `---\n${front}\n---\n\n${body}`;

function mustLoad(name: string, files: SkillFileInput[]): ParsedSkill {
  const result = loadSkillFromFiles(name, files);
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  return result.skill;
}

describe("SKILL.md frontmatter", () => {
  it("reads name, description, license, allowed-tools, metadata and the body", () => {
    const r = parseSkillMarkdown(
      md(
        "name: pdf-forms\ndescription: Fill PDF forms.\nlicense: MIT\nallowed-tools: Read Bash(git:*)\nmetadata:\n  author: me\n  version: 2",
      ),
      "pdf-forms",
    );
    expect(r).toMatchObject({
      ok: true,
      body: "# Body\n\nDo the thing.\n",
      frontmatter: {
        name: "pdf-forms",
        description: "Fill PDF forms.",
        license: "MIT",
        allowedTools: ["Read", "Bash(git:*)"],
        metadata: { author: "me", version: "2" },
      },
    });
  });

  it.each([
    [
      "no frontmatter",
      "# Just markdown\n",
      1,
      /does not start with YAML frontmatter/,
      /begin the file with a line `---`/,
    ],
    ["an unclosed frontmatter", "---\nname: x\n", 1, /never closed/, /add a line `---`/],
    ["invalid YAML", "---\nname: a\ndescription: [unclosed\n---\n", 3, /invalid YAML/, /quote values/],
    ["a duplicate key", "---\nname: a\nname: a\ndescription: d\n---\n", 3, /invalid YAML/, /keep one/],
    ["no name", "---\ndescription: d\n---\nbody", 3, /no `name`/, /add `name: a`/],
    ["no description", "---\nname: a\n---\nbody", 3, /no `description`/, /add `description:/],
    ["a bad name", "---\nname: Bad_Name\ndescription: d\n---\nbody", 2, /lowercase letters/, /pdf-forms/],
    [
      "a name unlike the folder",
      "---\ndescription: d\nname: b\n---\nbody",
      3,
      /differs from the folder/,
      /rename the folder/,
    ],
    ["a list as description", "---\nname: a\ndescription:\n  - x\n---\nbody", 3, /not text/, /quote it/],
    [
      "metadata that is a list",
      "---\nname: a\ndescription: d\nmetadata: [1]\n---\nb",
      4,
      /not a map/,
      /nested/,
    ],
  ])("reports %s with SKILL.md:line and a fix", (_what, text, line, message, fix) => {
    const r = parseSkillMarkdown(text, "a");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.diagnostics[0]).toMatchObject({
      file: "SKILL.md",
      line,
      message: expect.stringMatching(message),
    });
    expect(r.diagnostics[0]?.fix).toMatch(fix);
  });

  it("warns about unknown fields and keeps them in the raw frontmatter", () => {
    const r = parseSkillMarkdown(md("name: a\ndescription: d\ncolour: blue"), "a");
    expect(r.ok && r.warnings.map((w) => [w.line, w.message])).toEqual([
      [4, "unknown frontmatter field `colour` (kept, not used)"],
    ]);
    expect(r.ok && r.frontmatter.raw.colour).toBe("blue");
  });
});

describe("paths and limits", () => {
  const skillMd = file("SKILL.md", md("name: s\ndescription: d"));

  it.each([
    ["../", "../etc/passwd", /climbs out/],
    ["a nested ..", "refs/../../x", /climbs out/],
    ["absolute", "/etc/passwd", /is absolute/],
    ["a drive letter", "C:/x.txt", /drive letter/],
    ["backslashes", "refs\\x.md", /backslashes/],
  ])("refuses a %s path in an upload", (_what, p, message) => {
    const r = loadSkillFromFiles("s", [skillMd, file(p, "x")]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.diagnostics[0]?.message).toMatch(message);
  });

  it("refuses a file over the per-file limit, too many files, and too many bytes", () => {
    const limits = { maxFiles: 3, maxTotalBytes: 100, maxFileBytes: 60 };
    const big = loadSkillFromFiles("s", [skillMd, file("a.txt", "x".repeat(61))], {
      ...limits,
      maxTotalBytes: 1000,
    });
    expect(!big.ok && big.diagnostics.map((d) => d.message)).toEqual([
      "a.txt is 61 B; one file may be at most 60 B",
    ]);
    const many = loadSkillFromFiles("s", [skillMd, file("a", "1"), file("b", "2"), file("c", "3")], limits);
    expect(!many.ok && many.diagnostics[0]?.message).toBe("the skill has 4 files; at most 3 are allowed");
    const total = loadSkillFromFiles(
      "s",
      [skillMd, file("a", "x".repeat(50)), file("b", "x".repeat(50))],
      limits,
    );
    expect(!total.ok && total.diagnostics[0]?.message).toMatch(/add up to .* at most 100 B/);
  });

  it("gives equal content an equal hash, and any change a new one", () => {
    const a = mustLoad("s", [skillMd, file("r.md", "one")]);
    const b = mustLoad("s", [file("r.md", "one"), skillMd]);
    const c = mustLoad("s", [skillMd, file("r.md", "two")]);
    expect(a.contentHash).toBe(b.contentHash);
    expect(c.contentHash).not.toBe(a.contentHash);
    expect(a.files.map((f) => [f.path, f.mime, f.text])).toEqual([
      ["SKILL.md", "text/markdown", true],
      ["r.md", "text/markdown", true],
    ]);
  });

  describe("folders on disk", () => {
    let root: string;
    beforeAll(() => {
      root = mkdtempSync(path.join(tmpdir(), "skills-"));
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    function makeSkill(name: string, extra: (dir: string) => void = () => {}) {
      const dir = path.join(root, name);
      mkdirSync(path.join(dir, "refs"), { recursive: true });
      writeFileSync(path.join(dir, "SKILL.md"), md(`name: ${name}\ndescription: d`));
      writeFileSync(path.join(dir, "refs", "guide.md"), "# Guide\n");
      extra(dir);
      return dir;
    }

    it("reads nested files and follows a symlink that stays inside", () => {
      const dir = makeSkill("inside", (d) =>
        symlinkSync(path.join(d, "refs", "guide.md"), path.join(d, "alias.md")),
      );
      const r = readSkillFolder(dir);
      expect(r.ok && r.files.map((f) => f.path).sort()).toEqual(["SKILL.md", "alias.md", "refs/guide.md"]);
    });

    it("refuses a symlink to a file outside the folder, naming it", () => {
      writeFileSync(path.join(root, "secret.txt"), "top secret");
      const dir = makeSkill("escape", (d) =>
        symlinkSync(path.join(root, "secret.txt"), path.join(d, "refs", "leak.txt")),
      );
      const r = readSkillFolder(dir);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.diagnostics[0]).toMatchObject({
          file: "refs/leak.txt",
          message: expect.stringMatching(/outside the skill folder/),
        });
      }
    });

    it("refuses a relative ../ symlink and a symlinked folder", () => {
      const dir = makeSkill("relative", (d) => {
        symlinkSync("../../secret.txt", path.join(d, "refs", "up.txt"));
        symlinkSync(path.join(d, "refs"), path.join(d, "refs-link"));
      });
      const r = readSkillFolder(dir);
      expect(!r.ok && r.diagnostics.map((d) => d.file).sort()).toEqual(["refs-link", "refs/up.txt"]);
    });

    it("refuses a file over the limit before reading it", () => {
      const dir = makeSkill("large", (d) => writeFileSync(path.join(d, "big.bin"), Buffer.alloc(2048)));
      const r = readSkillFolder(dir, { maxFiles: 10, maxTotalBytes: 10_000, maxFileBytes: 1024 });
      expect(!r.ok && r.diagnostics[0]?.message).toBe(
        "big.bin is 2048 bytes; one file may be at most 1024 bytes",
      );
    });

    it("lists only sub-folders that hold a SKILL.md", () => {
      mkdirSync(path.join(root, "not-a-skill"), { recursive: true });
      expect(listSkillFolders(root).map((d) => path.basename(d))).toEqual([
        "escape",
        "inside",
        "large",
        "relative",
      ]);
    });
  });
});

describe("toolstore/skills categories", () => {
  it("match the reviewed snapshot (a reclassification must show up as a diff of skills-categories.json)", () => {
    const module = createSkillsModule({ store: createMemorySkillStore([]) });
    const actual = Object.fromEntries(
      module.exports
        .map((e) => [e.spec.name, e.spec.category] as const)
        .sort(([a], [b]) => a.localeCompare(b)),
    );
    const snapshot = JSON.parse(readFileSync(new URL("./skills-categories.json", import.meta.url), "utf8"));
    expect(actual).toEqual(snapshot);
  });
});

describe("the shipped example skills", () => {
  it("all load from skills/, and csv-tables' scripts are JavaScript", () => {
    const root = new URL("../../../skills/", import.meta.url).pathname;
    const loaded = listSkillFolders(root).map((dir) => {
      const read = readSkillFolder(dir);
      if (!read.ok) throw new Error(JSON.stringify(read.diagnostics));
      const result = loadSkillFromFiles(read.name, read.files);
      if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
      expect(result.warnings).toEqual([]);
      return result.skill;
    });
    expect(loaded.map((s) => s.name)).toEqual(["csv-tables", "internal-comms", "toolset-authoring"]);
    expect(loaded[1]?.files.map((f) => f.path)).toContain("LICENSE.txt");
    expect(loaded[0]?.files.filter((f) => f.path.startsWith("scripts/")).map((f) => f.mime)).toEqual([
      "text/javascript",
      "text/javascript",
    ]);
  });
});

describe("toolstore/skills through the gate", () => {
  let pool: SandboxPool;
  let ports: MemoryPorts;
  let engine: Engine;
  let canary: ReturnType<typeof createCanaryModule>;
  const long = "line of text\n".repeat(4000);
  const skills = [
    mustLoad("report", [
      file(
        "SKILL.md",
        md("name: report\ndescription: Write a report from data.\nallowed-tools: canary.write"),
      ),
      file("references/long.md", long),
      { path: "assets/logo.png", bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]) },
      file("scripts/sum.js", "export default async function (input) { return { sum: input.a + input.b }; }"),
      file(
        "scripts/save.js",
        'import { write } from "toolstore/canary";\nexport default async function (input) {\n  try { return await write({ value: input.value }); }\n  catch (e) { return { refused: e.error, capability: e.capability }; }\n}',
      ),
      file("scripts/fail.js", "export default async function () { throw new Error('bad data'); }"),
      file(
        "scripts/import-missing.js",
        'import { nope } from "toolstore/nothing";\nexport default async function () {}',
      ),
      file("scripts/convert.py", "print('hi')"),
      file("scripts/setup.sh", "echo hi"),
    ]),
    mustLoad("notes", [file("SKILL.md", md("name: notes\ndescription: Take notes well."))]),
  ];

  beforeAll(async () => {
    pool = createSandboxPool({ workers: 1 });
    await pool.warm();
  });
  afterAll(() => pool.close());
  beforeEach(() => {
    ports = createMemoryPorts();
    canary = createCanaryModule();
    const store = createMemorySkillStore(skills);
    const javascript = createSandboxScriptRunner({
      pool,
      mountedModules: async (session) =>
        Object.fromEntries(
          (await engine.registry.mountedModules(session)).map((m) => [
            m.name,
            m.exports.map((e) => e.exportName),
          ]),
        ),
    });
    engine = createEngine({
      ports,
      instanceId: "t",
      pool,
      modules: [builtinModules(), () => [canary, createSkillsModule({ store, javascript })]],
      catalogSources: [createSkillCatalogSource(store)],
    });
  });

  const plan = sessionInMode("plan");
  const auto = sessionInMode("auto");
  const call = (name: string, args: unknown, session = plan) =>
    engine.invoke({ session, name, args }).then((r) => r.value);

  it("list gives names, descriptions and file counts only", async () => {
    expect(await call("skills.list", {})).toEqual({
      skills: [
        { name: "notes", description: "Take notes well.", files: 1 },
        { name: "report", description: "Write a report from data.", files: 9 },
      ],
    });
  });

  it("load gives the body; files the tree with sizes; unknown names get a hint", async () => {
    expect(await call("skills.load", { name: "report" })).toMatchObject({
      name: "report",
      body: "# Body\n\nDo the thing.\n",
    });
    const tree = (await call("skills.files", { name: "report" })) as {
      files: Array<{ path: string; size: number }>;
    };
    expect(tree.files).toContainEqual({
      path: "references/long.md",
      size: long.length,
      mime: "text/markdown",
      text: true,
    });
    expect(tree.files).toContainEqual({ path: "assets/logo.png", size: 7, mime: "image/png", text: false });
    await expect(call("skills.load", { name: "reprot" })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringMatching(/did you mean "report"/i),
    });
  });

  it("read is capped and reads on from an offset; binaries and escapes are refused", async () => {
    const first = (await call("skills.read", { name: "report", path: "references/long.md" })) as Record<
      string,
      unknown
    >;
    expect(first).toMatchObject({ offset: 0, length: long.length, next_offset: READ_CAP_CHARS });
    expect((first.text as string).length).toBe(READ_CAP_CHARS);
    const rest = (await call("skills.read", {
      name: "report",
      path: "references/long.md",
      offset: READ_CAP_CHARS * 1,
    })) as Record<string, unknown>;
    expect((first.text as string) + (rest.text as string)).toBe(long);
    expect(rest.next_offset).toBeNull();
    await expect(call("skills.read", { name: "report", path: "assets/logo.png" })).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/binary \(image\/png/),
    });
    await expect(call("skills.read", { name: "report", path: "../notes/SKILL.md" })).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/climbs out/),
    });
    await expect(call("skills.read", { name: "report", path: "/etc/passwd" })).rejects.toMatchObject({
      code: "BAD_INPUT",
    });
  });

  it("every read is recorded by the gate as a read call", async () => {
    await call("skills.list", {});
    await call("skills.files", { name: "notes" });
    expect(ports.decisions.all.map((d) => [d.capability, d.category, d.decision])).toEqual([
      ["skills.list", "read", "allow"],
      ["skills.files", "read", "allow"],
    ]);
  });

  it("a plan-mode session can read but not run", async () => {
    await expect(call("skills.load", { name: "report" })).resolves.toBeTruthy();
    await expect(
      call("skills.run", { name: "report", path: "scripts/sum.js", input: { a: 1, b: 2 } }),
    ).rejects.toMatchObject({ code: "GATE_BLOCKED_PLAN" });
    const { envelope } = await engine.run({
      session: plan,
      code: 'import { run } from "toolstore/skills";\nexport default async function () { try { return await run({ name: "report", path: "scripts/sum.js", input: { a: 1, b: 2 } }); } catch (e) { return e.error; } }',
    });
    expect(envelope.result).toMatchObject({ planned: true, capability: "skills.run" });
  });

  it("run executes a JavaScript script in the sandbox with its input", async () => {
    expect(
      await call("skills.run", { name: "report", path: "scripts/sum.js", input: { a: 2, b: 40 } }, auto),
    ).toEqual({ ok: true, result: { sum: 42 }, logs: [] });
    expect(await call("skills.run", { name: "report", path: "scripts/fail.js" }, auto)).toMatchObject({
      ok: false,
      error: { kind: "threw", message: expect.stringMatching(/bad data/) },
    });
  });

  it("a script's capability calls go through the caller's gate, rules and session", async () => {
    const ran = (await call(
      "skills.run",
      { name: "report", path: "scripts/save.js", input: { value: "v1" } },
      auto,
    )) as { result: unknown };
    expect(ran.result).toMatchObject({ category: "write", echo: { value: "v1" } });
    expect(canary.runs).toHaveLength(1);
    ports.rules.set([{ id: "r1", effect: "deny", pattern: "canary.write", conditions: [] }]);
    const denied = (await call(
      "skills.run",
      { name: "report", path: "scripts/save.js", input: { value: "v2" } },
      auto,
    )) as { result: unknown };
    expect(denied.result).toEqual({ refused: "permission_denied", capability: "canary.write" });
    expect(canary.runs).toHaveLength(1);
    expect(ports.decisions.all.filter((d) => d.capability === "canary.write").map((d) => d.decision)).toEqual(
      ["allow", "deny"],
    );
    // allowed-tools: canary.write in the skill granted nothing.
  });

  it("a script may import only modules mounted for the caller", async () => {
    const narrow = sessionInMode("auto", { mountedModules: ["skills"] });
    await expect(
      call("skills.run", { name: "report", path: "scripts/save.js", input: { value: "x" } }, narrow),
    ).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/refused before it ran: .*toolstore\/canary/),
    });
    await expect(
      call("skills.run", { name: "report", path: "scripts/import-missing.js" }, auto),
    ).rejects.toMatchObject({ code: "BAD_INPUT" });
  });

  it("from inside an action, run is a nested action and its calls appear in the envelope", async () => {
    const { envelope } = await engine.run({
      session: auto,
      code: 'import { run } from "toolstore/skills";\nexport default async function () { return (await run({ name: "report", path: "scripts/save.js", input: { value: "n" } })).result; }',
    });
    expect(envelope.ok).toBe(true);
    expect(envelope.calls.map((c) => c.capability)).toEqual(["skills.run", "canary.write"]);
  });

  it("scripts in other languages are not runnable here, naming the language", async () => {
    await expect(
      call("skills.run", { name: "report", path: "scripts/convert.py" }, auto),
    ).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringMatching(/Python script: not runnable here.*Python runtime/),
    });
    await expect(
      call("skills.run", { name: "report", path: "scripts/setup.sh" }, auto),
    ).rejects.toMatchObject({ message: expect.stringMatching(/shell script: not runnable here/) });
    await expect(
      call("skills.run", { name: "report", path: "references/long.md" }, auto),
    ).rejects.toMatchObject({ message: expect.stringMatching(/not in scripts\//) });
  });

  it("store.list and store.search show skills with type skill", async () => {
    const listed = (await call("store.list", {})) as { tools: Array<{ name: string; source: string }> };
    expect(listed.tools).toContainEqual(
      expect.objectContaining({ name: "report", source: "skill", functions: [] }),
    );
    const found = (await call("store.search", { query: "notes" })) as {
      tools: Array<{ name: string; source: string }>;
    };
    expect(found.tools[0]).toMatchObject({ name: "notes", source: "skill" });
    const storeOnly = sessionInMode("plan", { mountedModules: ["store"] });
    const withoutSkills = (await call("store.list", {}, storeOnly)) as { tools: Array<{ name: string }> };
    expect(withoutSkills.tools.map((t) => t.name)).toEqual(["store"]);
  });
});

describe("a description over the spec's 1,024 characters", () => {
  // Anthropic's own `claude-api` skill has a 1,068-character description, and Claude loads it.
  const description =
    `Build apps with the Claude API. ${"Use it when the code calls the API. ".repeat(30)}`.slice(0, 1068);
  const skillMd = md(`name: claude-api\ndescription: "${description}"`);

  it("is loaded with a warning on its line, not refused", () => {
    expect(description).toHaveLength(1068);
    const parsed = parseSkillMarkdown(skillMd, "claude-api");
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.diagnostics));
    expect(parsed.frontmatter.description).toBe(description);
    expect(parsed.warnings).toEqual([
      expect.objectContaining({
        line: 3,
        message: expect.stringMatching(/1068 characters long, over the 1024/),
      }),
    ]);
    const loaded = loadSkillFromFiles("claude-api", [file("SKILL.md", skillMd)]);
    expect(loaded.ok && loaded.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/1068/)]);
  });

  it("listings cut it to 1,024 characters; load gives it whole", async () => {
    const store = createMemorySkillStore([mustLoad("claude-api", [file("SKILL.md", skillMd)])]);
    const module = createSkillsModule({ store });
    const impl = (name: string) => {
      const found = module.exports.find((e) => e.spec.name === name);
      if (!found) throw new Error(name);
      return (args: Record<string, string>) => found.impl({} as never, args);
    };
    const listed = (await impl("skills.list")({})) as { skills: { description: string }[] };
    const cut = listed.skills[0]?.description ?? "";
    expect(cut.length).toBeLessThanOrEqual(1024);
    expect(cut.endsWith("…")).toBe(true);
    expect(description.startsWith(cut.slice(0, -1))).toBe(true);
    expect(await impl("skills.load")({ name: "claude-api" })).toMatchObject({ description });
    const [entry] = await createSkillCatalogSource(store).list(sessionInMode("plan"));
    expect(entry?.description).toBe(cut);
  });
});
