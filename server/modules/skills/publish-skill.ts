/**
 * Publishing a skill version: validate (core), store a SkillVersion with its files, point the
 * Skill at it. Equal content is a no-op ("unchanged"). Used by startup sync and console upload.
 */

import { AppError } from "../../core/errors";
import {
  DEFAULT_SKILL_LIMITS,
  formatSkillDiagnostic,
  loadSkillFromFiles,
  readSkillFolder,
  type SkillDiagnostic,
  type SkillFileInput,
  type SkillLimits,
} from "../../core/skills";
import type { Db } from "../../db";

export type SkillOrigin = "sync" | "upload" | "cli";

export interface PublishSkillInput {
  /** A skill folder on disk; its name is the skill's name. */
  dir?: string;
  /** Files of an upload (then `name` is required). */
  files?: SkillFileInput[];
  name?: string;
  origin: SkillOrigin;
  userId?: string | null;
  limits?: SkillLimits;
}

export interface PublishSkillResult {
  status: "created" | "updated" | "unchanged";
  name: string;
  version: number;
  contentHash: string;
  warnings: SkillDiagnostic[];
}

function invalid(name: string, diagnostics: SkillDiagnostic[]): AppError {
  return new AppError(
    "SKILL_INVALID",
    `skill ${name} was not loaded: ${diagnostics.map((d) => formatSkillDiagnostic(d)).join("; ")}`,
    { details: { errors: diagnostics } },
  );
}

export async function publishSkill(db: Db, input: PublishSkillInput): Promise<PublishSkillResult> {
  const limits = input.limits ?? DEFAULT_SKILL_LIMITS;
  let name: string;
  let files: SkillFileInput[];
  if (input.dir) {
    const read = readSkillFolder(input.dir, limits);
    if (!read.ok) throw invalid(read.name, read.diagnostics);
    name = input.name ?? read.name;
    files = read.files;
  } else if (input.files && input.name) {
    name = input.name;
    files = input.files;
  } else {
    throw new AppError("BAD_INPUT", "publishSkill needs a folder, or files and a name");
  }
  const loaded = loadSkillFromFiles(name, files, limits);
  if (!loaded.ok) throw invalid(name, loaded.diagnostics);
  const { skill } = loaded;

  const existing = await db.skill.findUnique({
    where: { name },
    select: { id: true, currentVersionId: true },
  });
  if (existing?.currentVersionId) {
    const current = await db.skillVersion.findUnique({
      where: { id: existing.currentVersionId },
      select: { contentHash: true, version: true },
    });
    if (current?.contentHash === skill.contentHash) {
      return {
        status: "unchanged",
        name,
        version: current.version,
        contentHash: skill.contentHash,
        warnings: loaded.warnings,
      };
    }
  }
  const row =
    existing ??
    (await db.skill.upsert({
      where: { name },
      create: { name, description: skill.description },
      update: {},
      select: { id: true, currentVersionId: true },
    }));
  const last = await db.skillVersion.findFirst({
    where: { skillId: row.id },
    orderBy: { version: "desc" },
    select: { version: true },
  });
  const version = (last?.version ?? 0) + 1;
  const created = await db.skillVersion.create({
    data: {
      skillId: row.id,
      version,
      contentHash: skill.contentHash,
      description: skill.description,
      license: skill.license ?? null,
      allowedTools: JSON.stringify(skill.allowedTools),
      metadata: JSON.stringify(skill.metadata),
      frontmatter: JSON.stringify(skill.raw),
      body: skill.body,
      fileCount: skill.files.length,
      totalBytes: skill.totalBytes,
      origin: input.origin,
      publishedById: input.userId ?? null,
      files: {
        create: skill.files.map((f) => ({
          path: f.path,
          size: f.size,
          sha256: f.sha256,
          mime: f.mime,
          text: f.text,
          content: new Uint8Array(f.bytes),
        })),
      },
    },
    select: { id: true },
  });
  await db.skill.update({
    where: { id: row.id },
    data: { currentVersionId: created.id, description: skill.description },
  });
  return {
    status: existing?.currentVersionId ? "updated" : "created",
    name,
    version,
    contentHash: skill.contentHash,
    warnings: loaded.warnings,
  };
}
