/**
 * Skills in `store.list`/`search`/`info`, with type "skill", for sessions that may use
 * `toolstore/skills`. A skill has no functions: it is read through `toolstore/skills`.
 */
import type { CatalogSource } from "../capabilities/ports";
import { listedDescription } from "./parse-skill";
import type { SkillStore } from "./ports";

export function createSkillCatalogSource(store: SkillStore): CatalogSource {
  return {
    id: "skills",
    async list(session) {
      const mounted = session.mountedModules.includes("*") || session.mountedModules.includes("skills");
      if (!mounted) return [];
      const skills = await store.list();
      const records = await Promise.all(skills.map((s) => store.get(s.name)));
      return records.flatMap((r) =>
        r
          ? [
              {
                name: r.name,
                description: listedDescription(r.description),
                source: "skill" as const,
                functions: [],
                doc: `${r.body}\n\n(Read it with toolstore/skills: load({ name: "${r.name}" }), files, read.)`,
              },
            ]
          : [],
      );
    },
  };
}
