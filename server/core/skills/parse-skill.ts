/**
 * Parses SKILL.md: YAML frontmatter between `---` lines (read with the `yaml` library, so every
 * problem has a line) and the markdown body. Each problem comes with a fix. Nothing is run.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type YAMLMap } from "yaml";
import { SKILL_FILE, type SkillDiagnostic, type SkillFrontmatter } from "./types";

/** The Agent Skills naming rule: lowercase letters, digits and single hyphens, at most 64. */
const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const MAX_SKILL_NAME = 64;

const KNOWN_KEYS = new Set(["name", "description", "license", "allowed-tools", "metadata", "compatibility"]);

export type FrontmatterResult =
  | { ok: true; frontmatter: SkillFrontmatter; body: string; warnings: SkillDiagnostic[] }
  | { ok: false; diagnostics: SkillDiagnostic[] };

/** Why a skill name is unusable, or undefined when it is fine. */
function skillNameProblem(name: string): string | undefined {
  if (name.length === 0) return "is empty";
  if (name.length > MAX_SKILL_NAME) return `is ${name.length} characters long (at most ${MAX_SKILL_NAME})`;
  if (!SKILL_NAME_PATTERN.test(name))
    return "may hold only lowercase letters, digits and single hyphens, not at the start or end";
  return undefined;
}

/** The description length the Agent Skills spec allows; listings cut a longer one to it. */
const MAX_DESCRIPTION = 1024;

type Diag = (line: number | undefined, message: string, fix: string) => SkillDiagnostic;

const diag: Diag = (line, message, fix) => ({
  file: SKILL_FILE,
  ...(line === undefined ? {} : { line }),
  message,
  fix,
});

/** The frontmatter split from the body and read as YAML, with the file line of each key. */
interface Frontmatter {
  raw: Record<string, unknown>;
  contents: YAMLMap;
  body: string;
  /** File line of the closing `---`. */
  closeLine: number;
  keyLine(key: string): number | undefined;
}

function refused(...diagnostics: SkillDiagnostic[]): { ok: false; diagnostics: SkillDiagnostic[] } {
  return { ok: false, diagnostics };
}

function readFrontmatter(text: string): Frontmatter | { ok: false; diagnostics: SkillDiagnostic[] } {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = source.split(/\r?\n/);
  if (lines[0]?.trim() !== "---") {
    return refused(
      diag(
        1,
        "SKILL.md does not start with YAML frontmatter",
        "begin the file with a line `---`, then `name: <skill-name>` and `description: <what it does and when to use it>`, then a closing `---`",
      ),
    );
  }
  const close = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  if (close < 0) {
    return refused(
      diag(
        1,
        "the frontmatter opened on line 1 is never closed",
        "add a line `---` after the last frontmatter field",
      ),
    );
  }
  const yamlText = lines.slice(1, close).join("\n");
  const body = lines
    .slice(close + 1)
    .join("\n")
    .replace(/^\n+/, "");
  // Frontmatter line N is file line N + 1 (the opening `---`).
  const counter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  const lineAt = (offset: number | undefined) =>
    offset === undefined ? undefined : counter.linePos(offset).line + 1;
  if (doc.errors.length > 0) {
    return refused(
      ...doc.errors.map((e) =>
        diag(
          lineAt(e.pos[0]),
          `invalid YAML in the frontmatter: ${e.message.split("\n")[0]}`,
          e.code === "DUPLICATE_KEY"
            ? "keep one of the repeated keys"
            : 'quote values that hold `:` or `#` (description: "…"), and indent nested keys with spaces',
        ),
      ),
    );
  }
  const contents = doc.contents;
  if (!isMap(contents)) {
    return refused(
      diag(
        2,
        "the frontmatter is not a set of `key: value` fields",
        "write `name: …` and `description: …` lines",
      ),
    );
  }
  return {
    raw: doc.toJS() as Record<string, unknown>,
    contents,
    body,
    closeLine: close + 1,
    keyLine(key) {
      const pair = contents.items.find((p) => isScalar(p.key) && p.key.value === key);
      return lineAt(isScalar(pair?.key) ? pair.key.range?.[0] : undefined);
    },
  };
}

const isBlank = (value: unknown) => value === undefined || value === null || value === "";

/** `name` and `description` must be there and be text. */
function requiredTextProblem(
  fm: Frontmatter,
  key: "name" | "description",
  fixes: { missing: string; notText: string },
): SkillDiagnostic | undefined {
  const value = fm.raw[key];
  if (isBlank(value)) return diag(fm.closeLine, `the frontmatter has no \`${key}\``, fixes.missing);
  if (typeof value !== "string") return diag(fm.keyLine(key), `\`${key}\` is not text`, fixes.notText);
  return undefined;
}

function nameProblem(fm: Frontmatter, folderName: string | undefined): SkillDiagnostic | undefined {
  const missing = requiredTextProblem(fm, "name", {
    missing: `add \`name: ${folderName ?? "my-skill"}\` (the folder's name)`,
    notText: "write the name as plain text, e.g. `name: my-skill`",
  });
  if (missing) return missing;
  const name = fm.raw.name as string;
  const problem = skillNameProblem(name);
  if (problem) {
    return diag(
      fm.keyLine("name"),
      `the name "${name}" ${problem}`,
      "use a name like `pdf-forms`: lowercase, digits, hyphens",
    );
  }
  if (folderName !== undefined && name !== folderName) {
    return diag(
      fm.keyLine("name"),
      `the name "${name}" differs from the folder's name "${folderName}"`,
      `rename the folder to ${name}, or set \`name: ${folderName}\``,
    );
  }
  return undefined;
}

/**
 * A description over the spec's length is only a warning: hosts (Claude among them) load such
 * skills, and Anthropic's own skills have some. Listings cut it; `load` gives it whole.
 */
function descriptionLengthWarning(fm: Frontmatter): SkillDiagnostic | undefined {
  const description = fm.raw.description;
  if (typeof description !== "string" || description.length <= MAX_DESCRIPTION) return undefined;
  return diag(
    fm.keyLine("description"),
    `the description is ${description.length} characters long, over the ${MAX_DESCRIPTION} the Agent Skills spec allows; listings show its first ${MAX_DESCRIPTION}`,
    "shorten it and move the detail into the SKILL.md body",
  );
}

function readAllowedTools(fm: Frontmatter, diagnostics: SkillDiagnostic[]): string[] {
  const tools = fm.raw["allowed-tools"];
  if (typeof tools === "string") return tools.split(/[\s,]+/).filter(Boolean);
  if (Array.isArray(tools) && tools.every((t) => typeof t === "string")) return tools as string[];
  if (tools !== undefined && tools !== null) {
    diagnostics.push(
      diag(
        fm.keyLine("allowed-tools"),
        "`allowed-tools` is neither text nor a list of names",
        "write `allowed-tools: Read Grep` or a YAML list of tool names",
      ),
    );
  }
  return [];
}

function readMetadata(fm: Frontmatter, diagnostics: SkillDiagnostic[]): Record<string, string> {
  const metadata: Record<string, string> = {};
  const meta = fm.raw.metadata;
  if (meta === undefined || meta === null) return metadata;
  if (typeof meta !== "object" || Array.isArray(meta) || isSeq(fm.contents.get("metadata", true))) {
    diagnostics.push(
      diag(
        fm.keyLine("metadata"),
        "`metadata` is not a map",
        "write nested `key: value` lines under `metadata:`",
      ),
    );
    return metadata;
  }
  for (const [k, v] of Object.entries(meta as Record<string, unknown>)) {
    metadata[k] = typeof v === "string" ? v : JSON.stringify(v);
  }
  return metadata;
}

function warningsOf(fm: Frontmatter): SkillDiagnostic[] {
  const warnings: SkillDiagnostic[] = [];
  const long = descriptionLengthWarning(fm);
  if (long) warnings.push(long);
  for (const key of Object.keys(fm.raw)) {
    if (!KNOWN_KEYS.has(key)) {
      warnings.push(
        diag(
          fm.keyLine(key),
          `unknown frontmatter field \`${key}\` (kept, not used)`,
          "move it under `metadata:`",
        ),
      );
    }
  }
  if (fm.body.trim() === "") {
    warnings.push(
      diag(fm.closeLine + 1, "SKILL.md has no body", "write the instructions an agent should follow"),
    );
  }
  return warnings;
}

/**
 * @param text the content of SKILL.md
 * @param folderName the skill's folder name; the frontmatter `name` must equal it
 */
export function parseSkillMarkdown(text: string, folderName?: string): FrontmatterResult {
  const fm = readFrontmatter(text);
  if ("ok" in fm) return fm;
  const { raw } = fm;
  const diagnostics: SkillDiagnostic[] = [];
  const name = nameProblem(fm, folderName);
  if (name) diagnostics.push(name);
  const description = requiredTextProblem(fm, "description", {
    missing: "add `description: <what the skill does and when an agent should use it>`",
    notText: 'quote it: description: "…"',
  });
  if (description) diagnostics.push(description);
  const license = raw.license;
  if (license !== undefined && license !== null && typeof license !== "string") {
    diagnostics.push(
      diag(fm.keyLine("license"), "`license` is not text", "write e.g. `license: Apache-2.0`"),
    );
  }
  const allowedTools = readAllowedTools(fm, diagnostics);
  const metadata = readMetadata(fm, diagnostics);

  if (diagnostics.length > 0) return { ok: false, diagnostics };
  return {
    ok: true,
    body: fm.body,
    warnings: warningsOf(fm),
    frontmatter: {
      name: raw.name as string,
      description: raw.description as string,
      ...(typeof license === "string" ? { license } : {}),
      allowedTools,
      metadata,
      raw: JSON.parse(JSON.stringify(raw)) as Record<string, unknown>,
    },
  };
}

/** A description as a listing shows it: cut to the spec's length, with an ellipsis when cut. */
export function listedDescription(description: string): string {
  if (description.length <= MAX_DESCRIPTION) return description;
  return `${description.slice(0, MAX_DESCRIPTION - 1).trimEnd()}…`;
}
