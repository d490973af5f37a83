/** A SkillStore over parsed skills held in memory (tests, and a folder served without a database). */
import type { SkillRecord, SkillStore } from "./ports";
import type { ParsedSkill } from "./types";

function skillRecord(skill: ParsedSkill, version = 1): SkillRecord {
  return {
    name: skill.name,
    description: skill.description,
    fileCount: skill.files.length,
    version,
    contentHash: skill.contentHash,
    body: skill.body,
    ...(skill.license === undefined ? {} : { license: skill.license }),
    allowedTools: skill.allowedTools,
    metadata: skill.metadata,
    frontmatter: skill.raw,
    files: skill.files.map(({ bytes: _bytes, ...entry }) => entry),
  };
}

export function createMemorySkillStore(skills: ParsedSkill[]): SkillStore {
  const byName = new Map(skills.map((s) => [s.name, s]));
  return {
    async list() {
      return [...byName.values()]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((s) => {
          const { name, description, fileCount, version, contentHash } = skillRecord(s);
          return { name, description, fileCount, version, contentHash };
        });
    },
    async get(name) {
      const skill = byName.get(name);
      return skill ? skillRecord(skill) : null;
    },
    async readFile(name, path) {
      const file = byName.get(name)?.files.find((f) => f.path === path);
      if (!file) return null;
      const { bytes, ...entry } = file;
      return { entry, bytes };
    },
  };
}
