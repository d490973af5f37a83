/**
 * Parses SKILL.md: YAML frontmatter between `---` lines (read with the `yaml` library, so every
 * problem has a line) and the markdown body. Each problem comes with a fix. Nothing is run.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from "yaml";
import { SKILL_FILE, type SkillDiagnostic, type SkillFrontmatter } from "./types";

/** The Agent Skills naming rule: lowercase letters, digits and single hyphens, at most 64. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const MAX_SKILL_NAME = 64;
export const MAX_DESCRIPTION = 1024;

const KNOWN_KEYS = new Set(["name", "description", "license", "allowed-tools", "metadata", "compatibility"]);

export type FrontmatterResult =
  | { ok: true; frontmatter: SkillFrontmatter; body: string; warnings: SkillDiagnostic[] }
  | { ok: false; diagnostics: SkillDiagnostic[] };

/** Why a skill name is unusable, or undefined when it is fine. */
export function skillNameProblem(name: string): string | undefined {
  if (name.length === 0) return "is empty";
  if (name.length > MAX_SKILL_NAME) return `is ${name.length} characters long (at most ${MAX_SKILL_NAME})`;
  if (!SKILL_NAME_PATTERN.test(name))
    return "may hold only lowercase letters, digits and single hyphens, not at the start or end";
  return undefined;
}

/**
 * @param text the content of SKILL.md
 * @param folderName the skill's folder name; the frontmatter `name` must equal it
 */
export function parseSkillMarkdown(text: string, folderName?: string): FrontmatterResult {
  const diag = (line: number | undefined, message: string, fix: string): SkillDiagnostic => ({
    file: SKILL_FILE,
    ...(line === undefined ? {} : { line }),
    message,
    fix,
  });
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = source.split(/\r?\n/);
  if (lines[0]?.trim() !== "---") {
    return {
      ok: false,
      diagnostics: [
        diag(
          1,
          "SKILL.md does not start with YAML frontmatter",
          "begin the file with a line `---`, then `name: <skill-name>` and `description: <what it does and when to use it>`, then a closing `---`",
        ),
      ],
    };
  }
  const close = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  if (close < 0) {
    return {
      ok: false,
      diagnostics: [
        diag(
          1,
          "the frontmatter opened on line 1 is never closed",
          "add a line `---` after the last frontmatter field",
        ),
      ],
    };
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
    return {
      ok: false,
      diagnostics: doc.errors.map((e) =>
        diag(
          lineAt(e.pos[0]),
          `invalid YAML in the frontmatter: ${e.message.split("\n")[0]}`,
          e.code === "DUPLICATE_KEY"
            ? "keep one of the repeated keys"
            : 'quote values that hold `:` or `#` (description: "…"), and indent nested keys with spaces',
        ),
      ),
    };
  }
  const contents = doc.contents;
  if (!isMap(contents)) {
    return {
      ok: false,
      diagnostics: [
        diag(
          2,
          "the frontmatter is not a set of `key: value` fields",
          "write `name: …` and `description: …` lines",
        ),
      ],
    };
  }
  const keyLine = (key: string): number | undefined => {
    const pair = contents.items.find((p) => isScalar(p.key) && p.key.value === key);
    return lineAt(isScalar(pair?.key) ? pair.key.range?.[0] : undefined);
  };
  const raw = doc.toJS() as Record<string, unknown>;
  const diagnostics: SkillDiagnostic[] = [];
  const warnings: SkillDiagnostic[] = [];
  const closeLine = close + 1;

  const name = raw.name;
  if (name === undefined || name === null || name === "") {
    diagnostics.push(
      diag(
        closeLine,
        "the frontmatter has no `name`",
        `add \`name: ${folderName ?? "my-skill"}\` (the folder's name)`,
      ),
    );
  } else if (typeof name !== "string") {
    diagnostics.push(
      diag(keyLine("name"), "`name` is not text", "write the name as plain text, e.g. `name: my-skill`"),
    );
  } else {
    const problem = skillNameProblem(name);
    if (problem) {
      diagnostics.push(
        diag(
          keyLine("name"),
          `the name "${name}" ${problem}`,
          "use a name like `pdf-forms`: lowercase, digits, hyphens",
        ),
      );
    } else if (folderName !== undefined && name !== folderName) {
      diagnostics.push(
        diag(
          keyLine("name"),
          `the name "${name}" differs from the folder's name "${folderName}"`,
          `rename the folder to ${name}, or set \`name: ${folderName}\``,
        ),
      );
    }
  }

  const description = raw.description;
  if (description === undefined || description === null || description === "") {
    diagnostics.push(
      diag(
        closeLine,
        "the frontmatter has no `description`",
        "add `description: <what the skill does and when an agent should use it>`",
      ),
    );
  } else if (typeof description !== "string") {
    diagnostics.push(diag(keyLine("description"), "`description` is not text", 'quote it: description: "…"'));
  } else if (description.length > MAX_DESCRIPTION) {
    diagnostics.push(
      diag(
        keyLine("description"),
        `the description is ${description.length} characters long (at most ${MAX_DESCRIPTION})`,
        "shorten it and move the detail into the SKILL.md body",
      ),
    );
  }

  const license = raw.license;
  if (license !== undefined && license !== null && typeof license !== "string") {
    diagnostics.push(diag(keyLine("license"), "`license` is not text", "write e.g. `license: Apache-2.0`"));
  }

  let allowedTools: string[] = [];
  const tools = raw["allowed-tools"];
  if (typeof tools === "string") {
    allowedTools = tools.split(/[\s,]+/).filter(Boolean);
  } else if (Array.isArray(tools) && tools.every((t) => typeof t === "string")) {
    allowedTools = tools as string[];
  } else if (tools !== undefined && tools !== null) {
    diagnostics.push(
      diag(
        keyLine("allowed-tools"),
        "`allowed-tools` is neither text nor a list of names",
        "write `allowed-tools: Read Grep` or a YAML list of tool names",
      ),
    );
  }

  const metadata: Record<string, string> = {};
  const meta = raw.metadata;
  const metaNode = contents.get("metadata", true);
  if (meta !== undefined && meta !== null) {
    if (typeof meta !== "object" || Array.isArray(meta) || isSeq(metaNode)) {
      diagnostics.push(
        diag(
          keyLine("metadata"),
          "`metadata` is not a map",
          "write nested `key: value` lines under `metadata:`",
        ),
      );
    } else {
      for (const [k, v] of Object.entries(meta as Record<string, unknown>)) {
        metadata[k] = typeof v === "string" ? v : JSON.stringify(v);
      }
    }
  }

  for (const key of Object.keys(raw)) {
    if (!KNOWN_KEYS.has(key)) {
      warnings.push(
        diag(
          keyLine(key),
          `unknown frontmatter field \`${key}\` (kept, not used)`,
          "move it under `metadata:`",
        ),
      );
    }
  }
  if (body.trim() === "") {
    warnings.push(
      diag(closeLine + 1, "SKILL.md has no body", "write the instructions an agent should follow"),
    );
  }

  if (diagnostics.length > 0) return { ok: false, diagnostics };
  return {
    ok: true,
    body,
    warnings,
    frontmatter: {
      name: name as string,
      description: description as string,
      ...(typeof license === "string" ? { license } : {}),
      allowedTools,
      metadata,
      raw: JSON.parse(JSON.stringify(raw)) as Record<string, unknown>,
    },
  };
}
