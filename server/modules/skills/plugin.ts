/**
 * Skills as a source plug-in: `toolstore/skills` over the skills in the database (its scripts run
 * as nested actions in the sandbox, or in the Pyodide workers for .py), the skills as `store.list`
 * entries, and the shipped folder loaded at start. Skills are instructions, not capabilities of
 * their own, so they have no category review.
 */
import path from "node:path";
import type { CatalogSource, ModuleFactory } from "../../core/capabilities/ports";
import {
  createPythonScriptRunner,
  createSandboxScriptRunner,
  createSkillCatalogSource,
  createSkillsModule,
  type SkillStore,
} from "../../core/skills";
import { loadEnv } from "../../env";
import type { SourcePlugin } from "../plugin";
import { createPrismaSkillStore } from "./skill-store";
import { loadSkillsFolder } from "./sync-skills";

export interface SkillsParts {
  /** What `toolstore/skills`, store.list and the MCP skill resources read. */
  readonly store: SkillStore;
  modules: ModuleFactory[];
  catalogSources: CatalogSource[];
}

/** The skills plug-in over a given store (tests pass an in-memory one); default: the database. */
export function skillsPluginWith(
  storeFor: (db: Parameters<typeof createPrismaSkillStore>[0]) => SkillStore,
): SourcePlugin<"skills", SkillsParts> {
  return {
    id: "skills",
    kind: "skill",
    create({ db, pool, python, actionTimeoutMs, mountedModules }) {
      const store = storeFor(db);
      const limits = actionTimeoutMs ? { limits: { deadlineMs: actionTimeoutMs } } : {};
      const javascript = createSandboxScriptRunner({ pool, mountedModules, ...limits });
      // .py scripts run in the same locked-down Pyodide workers as toolset.py (own trust domain).
      const pythonScripts = createPythonScriptRunner({
        python,
        ...(actionTimeoutMs ? { timeoutMs: actionTimeoutMs } : {}),
      });
      return {
        store,
        modules: [() => [createSkillsModule({ store, javascript, python: pythonScripts })]],
        catalogSources: [createSkillCatalogSource(store)],
      };
    },
    loadAtStart: (db, { root, log }) =>
      loadSkillsFolder(db, path.resolve(root, loadEnv().TOOLSTORE_SKILLS_DIR), log),
  };
}

export const skillsPlugin = skillsPluginWith(createPrismaSkillStore);
