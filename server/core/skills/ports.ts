/**
 * What the skills module and the skill catalog read: the current version of every skill, from
 * the database (server/modules/skills) or from memory (tests). Types only.
 */
import type { SkillFileEntry } from "./types";

export interface SkillSummary {
  name: string;
  description: string;
  fileCount: number;
  version: number;
  contentHash: string;
}

export interface SkillRecord extends SkillSummary {
  body: string;
  license?: string;
  allowedTools: string[];
  metadata: Record<string, string>;
  /** The frontmatter as the author wrote it, as JSON. */
  frontmatter: Record<string, unknown>;
  /** Sorted by path, SKILL.md included. */
  files: SkillFileEntry[];
}

export interface SkillStore {
  list(): Promise<SkillSummary[]>;
  get(name: string): Promise<SkillRecord | null>;
  /** One file of the current version, or null. */
  readFile(name: string, path: string): Promise<{ entry: SkillFileEntry; bytes: Uint8Array } | null>;
}
