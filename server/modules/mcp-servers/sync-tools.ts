/**
 * An MCP server's tool list as last seen upstream, pinned per tool by a hash: a new or changed
 * tool waits for review (a changed one keeps its previous definition for the diff and loses its
 * Capability row), a removed one disappears, colliding export names are all held back.
 */
import { AppError } from "../../core/errors";
import type { Db } from "../../db";
import { parseJson, TOOL_DEFINITION, wireName } from "./servers";
import { assignExportNames, proposeCategory, toolHash, type UpstreamTool } from "./tools";

export interface SyncReport {
  added: string[];
  changed: string[];
  removed: string[];
  collisions: string[];
}

function pendingReason(proposal: ReturnType<typeof proposeCategory>, changed: boolean): string {
  const start = changed
    ? "changed upstream since it was accepted: review the diff and accept it again"
    : "new tool: waiting for an admin to accept or set its category";
  return proposal.category
    ? `${start} (proposed ${proposal.category} from ${proposal.because})`
    : `${start} (no category proposed: ${proposal.because})`;
}

/**
 * Stores the tool list a server just returned. Same hash: unchanged. A new tool arrives pending;
 * a changed tool goes back to pending (its previous definition kept for the diff) and its
 * Capability row is deactivated, so grants and pinned rules for the old hash stop applying; a
 * removed tool disappears. Tools whose export names collide are all held back.
 */
export async function syncServerTools(db: Db, server: string, tools: UpstreamTool[]): Promise<SyncReport> {
  const row = await db.mcpServer.findUnique({
    where: { name: server },
    select: {
      id: true,
      tools: {
        select: { ...TOOL_DEFINITION, annotations: true, acceptedHash: true, previous: true },
      },
    },
  });
  if (!row) throw new AppError("NOT_FOUND", `no MCP server named "${server}"`);
  const report: SyncReport = { added: [], changed: [], removed: [], collisions: [] };
  const names = assignExportNames(tools.map((t) => t.name));
  const existing = new Map(row.tools.map((t) => [t.name, t]));
  const problems: string[] = [];
  for (const [i, tool] of tools.entries()) {
    const named = names[i];
    if (!named) continue;
    const hash = toolHash(tool);
    const proposal = proposeCategory(tool.annotations);
    const old = existing.get(tool.name);
    existing.delete(tool.name);
    const definition = {
      exportName: named.exportName,
      description: tool.description,
      inputSchema: JSON.stringify(tool.inputSchema),
      annotations: JSON.stringify(tool.annotations),
      hash,
      proposedCategory: proposal.category,
    };
    if (named.collision) {
      problems.push(named.collision);
      report.collisions.push(tool.name);
    }
    if (!old) {
      report.added.push(tool.name);
      try {
        await db.mcpTool.create({
          data: {
            serverId: row.id,
            name: tool.name,
            ...definition,
            status: named.collision ? "collision" : "pending",
            reason: named.collision ?? pendingReason(proposal, false),
          },
          select: { id: true },
        });
      } catch (error) {
        // Another instance listed the same new tool first; its row is the same definition.
        if ((error as { code?: unknown }).code !== "P2002") throw error;
      }
      continue;
    }
    if (old.hash === hash && !named.collision && old.status !== "collision") continue;
    const changed = old.hash !== hash;
    if (changed) report.changed.push(tool.name);
    const wasAccepted = old.status === "accepted" || old.acceptedHash !== null;
    const previous =
      changed && wasAccepted
        ? JSON.stringify({
            name: old.name,
            description: old.description,
            inputSchema: parseJson(old.inputSchema, {}),
            annotations: parseJson(old.annotations, {}),
          } satisfies UpstreamTool)
        : old.previous;
    const stillAccepted = !changed && old.status === "accepted" && !named.collision;
    await db.mcpTool.update({
      where: { id: old.id },
      data: {
        ...definition,
        status: named.collision ? "collision" : stillAccepted ? "accepted" : "pending",
        reason: named.collision ?? (stillAccepted ? "" : pendingReason(proposal, changed && wasAccepted)),
        previous,
      },
      select: { id: true },
    });
    if (!stillAccepted) {
      await db.capability.updateMany({
        where: { name: wireName(server, old.exportName), source: "mcp" },
        data: { active: false },
      });
    }
  }
  for (const gone of existing.values()) {
    report.removed.push(gone.name);
    await db.mcpTool.delete({ where: { id: gone.id }, select: { id: true } });
    await db.capability.updateMany({
      where: { name: wireName(server, gone.exportName), source: "mcp" },
      data: { active: false },
    });
  }
  await db.mcpServer.update({
    where: { id: row.id },
    data: { toolsSyncedAt: new Date(), problems: JSON.stringify(problems) },
    select: { id: true },
  });
  return report;
}
