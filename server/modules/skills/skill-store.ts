/**
 * The SkillStore over the database: the current version of every skill. Each call reads which
 * version is current (so an upload on any instance shows at once); versions are immutable, so
 * their rows are cached by id. File bytes are read on demand.
 */
import type { SkillRecord, SkillStore, SkillSummary } from "../../core/skills";
import type { Db } from "../../db";

const MAX_CACHED_VERSIONS = 500;

function parseJson<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export function createPrismaSkillStore(db: Db): SkillStore {
  const versionCache = new Map<string, Omit<SkillRecord, "name">>();

  async function load(): Promise<Map<string, SkillRecord>> {
    const skills = await db.skill.findMany({
      where: { currentVersionId: { not: null } },
      select: { name: true, currentVersionId: true },
      orderBy: { name: "asc" },
    });
    const ids = skills.flatMap((s) =>
      s.currentVersionId && !versionCache.has(s.currentVersionId) ? [s.currentVersionId] : [],
    );
    const versions =
      ids.length === 0
        ? []
        : await db.skillVersion.findMany({
            where: { id: { in: ids } },
            select: {
              id: true,
              version: true,
              contentHash: true,
              description: true,
              license: true,
              allowedTools: true,
              metadata: true,
              frontmatter: true,
              body: true,
              fileCount: true,
              files: {
                select: { path: true, size: true, sha256: true, mime: true, text: true },
                orderBy: { path: "asc" },
              },
            },
          });
    if (versionCache.size + versions.length > MAX_CACHED_VERSIONS) versionCache.clear();
    for (const v of versions) {
      versionCache.set(v.id, {
        description: v.description,
        fileCount: v.fileCount,
        version: v.version,
        contentHash: v.contentHash,
        body: v.body,
        ...(v.license ? { license: v.license } : {}),
        allowedTools: parseJson<string[]>(v.allowedTools, []),
        metadata: parseJson<Record<string, string>>(v.metadata, {}),
        frontmatter: parseJson<Record<string, unknown>>(v.frontmatter, {}),
        files: v.files,
      });
    }
    const records = new Map<string, SkillRecord>();
    for (const s of skills) {
      const v = s.currentVersionId ? versionCache.get(s.currentVersionId) : undefined;
      if (v) records.set(s.name, { name: s.name, ...v });
    }
    return records;
  }

  return {
    async list(): Promise<SkillSummary[]> {
      return [...(await load()).values()].map(({ name, description, fileCount, version, contentHash }) => ({
        name,
        description,
        fileCount,
        version,
        contentHash,
      }));
    },
    async get(name) {
      return (await load()).get(name) ?? null;
    },
    async readFile(name, path) {
      const skill = await db.skill.findUnique({ where: { name }, select: { currentVersionId: true } });
      if (!skill?.currentVersionId) return null;
      const file = await db.skillFile.findUnique({
        where: { versionId_path: { versionId: skill.currentVersionId, path } },
        select: { path: true, size: true, sha256: true, mime: true, text: true, content: true },
      });
      if (!file) return null;
      const { content, ...entry } = file;
      return { entry, bytes: new Uint8Array(content) };
    },
  };
}
