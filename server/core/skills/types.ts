/**
 * Skill contracts: a skill is a folder with a SKILL.md (YAML frontmatter `name`, `description`,
 * optional `license`, `allowed-tools`, `metadata`; a markdown body) and optional files. Types only.
 */

export const SKILL_FILE = "SKILL.md";

/** Limits for one skill; a folder over any of them is refused as a whole. */
export interface SkillLimits {
  /** Files in the skill, SKILL.md included. */
  maxFiles: number;
  /** Sum of every file's size. */
  maxTotalBytes: number;
  /** One file's size. */
  maxFileBytes: number;
}

export const DEFAULT_SKILL_LIMITS: SkillLimits = {
  maxFiles: 200,
  maxTotalBytes: 8 * 1024 * 1024,
  maxFileBytes: 2 * 1024 * 1024,
};

/** One file of an upload or a folder read, by its path inside the skill (forward slashes). */
export interface SkillFileInput {
  path: string;
  bytes: Uint8Array;
}

/** A problem found while loading a skill: where, what, and how to fix it. */
export interface SkillDiagnostic {
  /** Path inside the skill (`SKILL.md`, `scripts/x.js`) or the folder itself (`.`). */
  file: string;
  line?: number;
  column?: number;
  message: string;
  fix: string;
}

export interface SkillFrontmatter {
  name: string;
  description: string;
  license?: string;
  /** As the author wrote it; shown to admins, never honoured. */
  allowedTools: string[];
  metadata: Record<string, string>;
  /** The whole frontmatter as JSON (MCP entries carry it verbatim). */
  raw: Record<string, unknown>;
}

export interface SkillFileEntry {
  path: string;
  size: number;
  /** Hex sha256 of the bytes. */
  sha256: string;
  mime: string;
  /** True when the bytes are UTF-8 text a reader can show. */
  text: boolean;
}

/** A skill that passed validation: ready to store as a version. */
export interface ParsedSkill extends SkillFrontmatter {
  /** The markdown after the frontmatter. */
  body: string;
  /** Sorted by path, SKILL.md included. */
  files: Array<SkillFileEntry & { bytes: Uint8Array }>;
  /** sha256 over every path and file digest: equal content, equal hash (a version). */
  contentHash: string;
  totalBytes: number;
}

export type SkillLoadResult =
  | { ok: true; skill: ParsedSkill; warnings: SkillDiagnostic[] }
  | { ok: false; name: string; diagnostics: SkillDiagnostic[] };
