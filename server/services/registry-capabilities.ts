/**
 * Brings modules the registry knows but the database does not (built-in platform modules) into
 * the Capability table, so the console lists them, an admin can change their category with the
 * usual history, and "test a call" can evaluate them. Toolset capabilities are written by their
 * publish; only their absence here is tolerated. An existing row keeps its effective category.
 */
import type { RegisteredModule } from "../core/capabilities/registry";
import type { Db } from "../db";

const seen = new Map<string, string>();

/** Idempotent and cheap after the first call per module version (remembered per process). */
export async function recordRegistryCapabilities(
  db: Db,
  modules: RegisteredModule[],
  /** Kinds whose source writes its own rows (a toolset's publish, an MCP tool's accepted category). */
  ownRows: ReadonlySet<string> = new Set(),
): Promise<number> {
  let written = 0;
  for (const module of modules) {
    if (ownRows.has(module.source)) continue;
    if (seen.get(module.name) === module.versionHash) continue;
    const existing = await db.capability.findMany({
      where: { module: module.name },
      select: { name: true },
    });
    const known = new Set(existing.map((c) => c.name));
    for (const cap of module.exports) {
      const common = {
        description: cap.spec.description,
        inputSchema: JSON.stringify(cap.spec.inputSchema ?? {}),
        versionHash: cap.versionHash,
        declaredCategory: cap.declaredCategory,
        active: true,
      };
      if (known.has(cap.name)) {
        await db.capability.update({ where: { name: cap.name }, data: common, select: { id: true } });
        continue;
      }
      try {
        const row = await db.capability.create({
          data: {
            name: cap.name,
            module: module.name,
            exportName: cap.exportName,
            source: module.source,
            category: cap.declaredCategory,
            ...common,
          },
          select: { id: true },
        });
        await db.categoryChange.create({
          data: {
            capabilityId: row.id,
            fromCategory: null,
            toCategory: cap.declaredCategory,
            reason: `${module.source} module ${module.name} (declared in its code)`,
          },
          select: { id: true },
        });
        written += 1;
      } catch (error) {
        // Another request or instance recorded it first.
        if ((error as { code?: unknown }).code !== "P2002") throw error;
      }
    }
    seen.set(module.name, module.versionHash);
  }
  return written;
}
