/**
 * `toolstore/skills`: progressive disclosure of skills for agents. `list` gives names,
 * descriptions and file counts; `load` the SKILL.md body; `files` the tree with sizes; `read` one
 * file as text, capped, from an offset. All `read`. `run` is `execute`: it runs a script from the
 * skill's scripts/: JavaScript as a nested action under the caller's session and gate, Python
 * (`def main(input)`) in the locked-down Python runtime, without network or capabilities.
 * A skill's `allowed-tools` is never honoured here: it grants nothing.
 */
import { didYouMean } from "../capabilities/did-you-mean";
import type { CapabilityModule, JsonObject, JsonValue } from "../capabilities/types";
import { AppError } from "../errors";
import { listedDescription } from "./parse-skill";
import type { SkillRecord, SkillStore } from "./ports";
import type { SkillScriptRunner } from "./run-script";
import { pathProblem } from "./skill-files";
import { scriptRunnerFor } from "./skill-script-runner";

const SKILLS_MODULE_VERSION = "builtin-skills-1";
/** Characters one `read` returns at most; longer files are read on with `offset`. */
export const READ_CAP_CHARS = 32 * 1024;
const SCRIPTS_DIR = "scripts/";

export interface SkillsModuleOptions {
  store: SkillStore;
  /** Runs JavaScript scripts; without one, `run` says scripts are not runnable on this server. */
  javascript?: SkillScriptRunner;
  /** Runs Python scripts (createPythonScriptRunner) when the server has a Python runtime. */
  python?: SkillScriptRunner;
}

const nameProp = { type: "string", description: "Skill name, as listed by skills.list" } as const;
/** The input of the exports that take only a skill's name. */
const nameOnlySchema = {
  type: "object",
  properties: { name: nameProp },
  required: ["name"],
  additionalProperties: false,
} as const;

/** The input of the exports that take one file of a skill, plus their own properties. */
function fileSchema(pathDescription: string, extra: JsonObject): JsonObject {
  return {
    type: "object",
    properties: { name: nameProp, path: { type: "string", description: pathDescription }, ...extra },
    required: ["name", "path"],
    additionalProperties: false,
  };
}

type SkillExport = CapabilityModule["exports"][number];

/** Finding a skill and its files, with errors that say what exists instead. */
function createSkillLookup(store: SkillStore) {
  async function skill(name: string): Promise<SkillRecord> {
    const found = await store.get(name);
    if (found) return found;
    const names = (await store.list()).map((s) => s.name);
    throw new AppError("NOT_FOUND", `no skill named "${name}"${didYouMean(name, names)}`);
  }

  function file(skill: SkillRecord, path: string) {
    const problem = pathProblem(path);
    if (problem)
      throw new AppError("BAD_INPUT", `the path "${path}" ${problem}; use a path from skills.files`);
    const entry = skill.files.find((f) => f.path === path);
    if (!entry) {
      throw new AppError(
        "NOT_FOUND",
        `${skill.name} has no file "${path}"${didYouMean(
          path,
          skill.files.map((f) => f.path),
        )}; skills.files lists them`,
      );
    }
    return entry;
  }

  async function text(skill: SkillRecord, path: string): Promise<string> {
    const found = await store.readFile(skill.name, path);
    if (!found)
      throw new AppError(
        "NOT_FOUND",
        `${skill.name}/${path} is gone (the skill changed); list its files again`,
      );
    return new TextDecoder().decode(found.bytes);
  }

  return { skill, file, text };
}

type SkillLookup = ReturnType<typeof createSkillLookup>;

function listExport(store: SkillStore): SkillExport {
  return {
    spec: {
      name: "skills.list",
      description: "List the skills: names, descriptions and file counts. Load one to read its instructions.",
      category: "read",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
    },
    impl: async () => ({
      skills: (await store.list()).map((s) => ({
        name: s.name,
        description: listedDescription(s.description),
        files: s.fileCount,
      })),
    }),
  };
}

/** A read export that takes only a skill's name and answers from its record. */
function bySkillName(
  lookup: SkillLookup,
  name: string,
  description: string,
  answer: (skill: SkillRecord) => JsonObject,
): SkillExport {
  return {
    spec: { name, description, category: "read", inputSchema: nameOnlySchema },
    impl: async (_run, args) => answer(await lookup.skill(String(args.name))),
  };
}

const loadExport = (lookup: SkillLookup) =>
  bySkillName(
    lookup,
    "skills.load",
    "The instructions of one skill: the body of its SKILL.md (markdown).",
    (skill) => ({
      name: skill.name,
      description: skill.description,
      body: skill.body,
      files: skill.fileCount,
      version: skill.version,
    }),
  );

const filesExport = (lookup: SkillLookup) =>
  bySkillName(
    lookup,
    "skills.files",
    "The file tree of one skill: every path with its size and MIME type.",
    (skill) => ({
      name: skill.name,
      files: skill.files.map((f) => ({ path: f.path, size: f.size, mime: f.mime, text: f.text })),
    }),
  );

function readExport(lookup: SkillLookup): SkillExport {
  return {
    spec: {
      name: "skills.read",
      description: `One file of a skill as text, at most ${READ_CAP_CHARS} characters from \`offset\`; \`next_offset\` says where to read on.`,
      category: "read",
      inputSchema: fileSchema("Path inside the skill, e.g. references/guide.md", {
        offset: { type: "integer", minimum: 0, default: 0, description: "Character to start at" },
      }),
      userMessage: (args) => `read ${String(args.name)}/${String(args.path)}`,
    },
    impl: async (_run, args) => {
      const skill = await lookup.skill(String(args.name));
      const entry = lookup.file(skill, String(args.path));
      if (!entry.text) {
        throw new AppError(
          "BAD_INPUT",
          `${skill.name}/${entry.path} is binary (${entry.mime}, ${entry.size} bytes); it cannot be read as text`,
        );
      }
      const text = await lookup.text(skill, entry.path);
      const offset = Math.min(Number(args.offset ?? 0), text.length);
      const end = Math.min(text.length, offset + READ_CAP_CHARS);
      return {
        name: skill.name,
        path: entry.path,
        mime: entry.mime,
        size: entry.size,
        length: text.length,
        offset,
        text: text.slice(offset, end),
        next_offset: end < text.length ? end : null,
      };
    },
  };
}

function runExport(lookup: SkillLookup, options: SkillsModuleOptions): SkillExport {
  return {
    spec: {
      name: "skills.run",
      description:
        "Run a JavaScript script from a skill's scripts/ folder in the sandbox, as an action under this session: its default export gets `input`, and every capability it calls is gated like your own calls." +
        (options.python
          ? " A Python script (.py) runs `main(input)` in the locked-down Python runtime: no network, no capabilities, only its input."
          : ""),
      category: "execute",
      // A script's effects are its own capability calls through this run, each journaled.
      journal: "nested",
      inputSchema: fileSchema("Script path, e.g. scripts/convert.js", {
        input: {
          description: "JSON value handed to the script's default export (or to main() of a .py script)",
        },
      }),
      userMessage: (args) => `run ${String(args.name)}/${String(args.path)}`,
    },
    impl: async (run, args) => {
      const skill = await lookup.skill(String(args.name));
      const entry = lookup.file(skill, String(args.path));
      if (!entry.path.startsWith(SCRIPTS_DIR)) {
        throw new AppError(
          "BAD_INPUT",
          `${entry.path} is not in ${SCRIPTS_DIR}; only scripts under ${SCRIPTS_DIR} run (read other files with skills.read)`,
        );
      }
      const label = `${skill.name}/${entry.path}`;
      const runner = scriptRunnerFor(entry.path, label, options);
      const code = await lookup.text(skill, entry.path);
      const input = (args.input ?? null) as JsonValue;
      return runner(run, { label, code, input }) as unknown as Promise<JsonObject>;
    },
  };
}

export function createSkillsModule(options: SkillsModuleOptions): CapabilityModule {
  const lookup = createSkillLookup(options.store);
  return {
    name: "skills",
    description:
      "Skills: instructions people wrote, read step by step: list, load (SKILL.md), files, read (one file), run (a script).",
    source: "builtin",
    versionHash: SKILLS_MODULE_VERSION,
    exports: [
      listExport(options.store),
      loadExport(lookup),
      filesExport(lookup),
      readExport(lookup),
      runExport(lookup, options),
    ],
  };
}
