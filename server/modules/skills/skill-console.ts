/**
 * What the console shows of skills: the list (with search), one skill with its files and
 * versions, a file of any version, a diff between two versions, and removal. Plain objects out,
 * rows selected explicitly.
 */
import { createTwoFilesPatch } from "diff";
import { AppError } from "../../core/errors";
import type { Db } from "../../db";

function parseJson<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export interface SkillListItem {
  name: string;
  description: string;
  version: number;
  fileCount: number;
  totalBytes: number;
  allowedTools: string[];
  license: string | null;
  updatedAt: string;
}

export async function listSkillsForConsole(db: Db, query = ""): Promise<SkillListItem[]> {
  const skills = await db.skill.findMany({
    where: { currentVersionId: { not: null } },
    select: { name: true, currentVersionId: true, updatedAt: true },
    orderBy: { name: "asc" },
  });
  const versions = await db.skillVersion.findMany({
    where: { id: { in: skills.flatMap((s) => (s.currentVersionId ? [s.currentVersionId] : [])) } },
    select: {
      id: true,
      version: true,
      description: true,
      fileCount: true,
      totalBytes: true,
      allowedTools: true,
      license: true,
      body: true,
    },
  });
  const byId = new Map(versions.map((v) => [v.id, v]));
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return skills.flatMap((s) => {
    const v = s.currentVersionId ? byId.get(s.currentVersionId) : undefined;
    if (!v) return [];
    const hay = `${s.name}\n${v.description}\n${v.body}`.toLowerCase();
    if (!words.every((w) => hay.includes(w))) return [];
    return [
      {
        name: s.name,
        description: v.description,
        version: v.version,
        fileCount: v.fileCount,
        totalBytes: v.totalBytes,
        allowedTools: parseJson<string[]>(v.allowedTools, []),
        license: v.license,
        updatedAt: s.updatedAt.toISOString(),
      },
    ];
  });
}

export async function getSkillForConsole(db: Db, name: string, version?: number) {
  const skill = await db.skill.findUnique({
    where: { name },
    select: {
      id: true,
      name: true,
      currentVersionId: true,
      versions: {
        select: {
          id: true,
          version: true,
          contentHash: true,
          origin: true,
          createdAt: true,
          fileCount: true,
          totalBytes: true,
        },
        orderBy: { version: "desc" },
      },
    },
  });
  if (!skill) throw new AppError("NOT_FOUND", `no skill named "${name}"`);
  const chosen =
    version === undefined
      ? skill.versions.find((v) => v.id === skill.currentVersionId)
      : skill.versions.find((v) => v.version === version);
  if (!chosen) throw new AppError("NOT_FOUND", `${name} has no version ${version ?? "(current)"}`);
  const v = await db.skillVersion.findUniqueOrThrow({
    where: { id: chosen.id },
    select: {
      description: true,
      license: true,
      allowedTools: true,
      metadata: true,
      body: true,
      files: {
        select: { path: true, size: true, mime: true, text: true, sha256: true },
        orderBy: { path: "asc" },
      },
    },
  });
  return {
    name: skill.name,
    version: chosen.version,
    current: chosen.id === skill.currentVersionId,
    contentHash: chosen.contentHash,
    description: v.description,
    license: v.license,
    allowedTools: parseJson<string[]>(v.allowedTools, []),
    metadata: parseJson<Record<string, string>>(v.metadata, {}),
    body: v.body,
    files: v.files,
    versions: skill.versions.map((x) => ({
      version: x.version,
      contentHash: x.contentHash,
      origin: x.origin,
      createdAt: x.createdAt.toISOString(),
      fileCount: x.fileCount,
      totalBytes: x.totalBytes,
      current: x.id === skill.currentVersionId,
    })),
  };
}

/** Characters of a file the console viewer shows; the rest is cut with a note. */
export const VIEWER_MAX_CHARS = 200_000;

export async function readSkillFileForConsole(db: Db, name: string, path: string, version?: number) {
  const versionId = await versionIdOf(db, name, version);
  const file = await db.skillFile.findUnique({
    where: { versionId_path: { versionId, path } },
    select: { path: true, size: true, mime: true, text: true, content: true },
  });
  if (!file) throw new AppError("NOT_FOUND", `${name} has no file "${path}"`);
  const text = file.text ? new TextDecoder().decode(file.content) : null;
  return {
    path: file.path,
    size: file.size,
    mime: file.mime,
    text: text === null ? null : text.slice(0, VIEWER_MAX_CHARS),
    truncated: text !== null && text.length > VIEWER_MAX_CHARS,
  };
}

async function versionIdOf(db: Db, name: string, version?: number): Promise<string> {
  const skill = await db.skill.findUnique({ where: { name }, select: { id: true, currentVersionId: true } });
  if (!skill) throw new AppError("NOT_FOUND", `no skill named "${name}"`);
  if (version === undefined) {
    if (!skill.currentVersionId) throw new AppError("NOT_FOUND", `${name} has no version`);
    return skill.currentVersionId;
  }
  const v = await db.skillVersion.findUnique({
    where: { skillId_version: { skillId: skill.id, version } },
    select: { id: true },
  });
  if (!v) throw new AppError("NOT_FOUND", `${name} has no version ${version}`);
  return v.id;
}

export interface SkillFileDiff {
  path: string;
  change: "added" | "removed" | "changed";
  /** Unified diff of text files; null for binary files. */
  patch: string | null;
}

export async function diffSkillVersions(
  db: Db,
  name: string,
  from: number,
  to: number,
): Promise<SkillFileDiff[]> {
  const [a, b] = await Promise.all([versionIdOf(db, name, from), versionIdOf(db, name, to)]);
  const select = { path: true, sha256: true, text: true, content: true } as const;
  const [filesA, filesB] = await Promise.all([
    db.skillFile.findMany({ where: { versionId: a }, select }),
    db.skillFile.findMany({ where: { versionId: b }, select }),
  ]);
  const mapA = new Map(filesA.map((f) => [f.path, f]));
  const mapB = new Map(filesB.map((f) => [f.path, f]));
  const paths = [...new Set([...mapA.keys(), ...mapB.keys()])].sort();
  const decode = (f?: { text: boolean; content: Uint8Array }) =>
    f?.text ? new TextDecoder().decode(f.content) : f ? null : "";
  const out: SkillFileDiff[] = [];
  for (const path of paths) {
    const x = mapA.get(path);
    const y = mapB.get(path);
    if (x && y && x.sha256 === y.sha256) continue;
    const change = !x ? "added" : !y ? "removed" : "changed";
    const before = decode(x);
    const after = decode(y);
    const patch =
      before === null || after === null
        ? null
        : createTwoFilesPatch(`v${from}/${path}`, `v${to}/${path}`, before, after, "", "", { context: 3 });
    out.push({ path, change, patch });
  }
  return out;
}

export async function removeSkill(db: Db, name: string): Promise<void> {
  const { count } = await db.skill.deleteMany({ where: { name } });
  if (count === 0) throw new AppError("NOT_FOUND", `no skill named "${name}"`);
}
