/**
 * External MCP servers as a source plug-in: one module per enabled server (module-source.ts),
 * their tools reviewed in the one category-review flow at the tool's hash.
 */
import type { Category } from "../../core/capabilities/types";
import { AppError } from "../../core/errors";
import type { Db } from "../../db";
import type { ReviewItem, SourcePlugin } from "../plugin";
import { categorizeTools } from "./categorize";
import { createMcpModuleSource, type McpModuleSource } from "./module-source";
import { wireName } from "./servers";

export interface McpSourceParts {
  /** The connections (console "refresh", status); engine.close() stops their processes. */
  readonly source: McpModuleSource;
  /** The engine closes it with its other module sources (its stdio processes end then). */
  moduleSources: McpModuleSource[];
}

const asCategory = (value: string | null) => value as Category | null;

async function pendingTools(db: Db): Promise<ReviewItem[]> {
  const tools = await db.mcpTool.findMany({
    where: { status: "pending", server: { enabled: true } },
    orderBy: [{ server: { name: "asc" } }, { name: "asc" }],
    select: {
      exportName: true,
      hash: true,
      proposedCategory: true,
      acceptedCategory: true,
      acceptedHash: true,
      reason: true,
      server: { select: { name: true } },
    },
  });
  return tools.map((t) => ({
    capability: wireName(t.server.name, t.exportName),
    source: "mcp",
    hash: t.hash,
    current: t.acceptedHash === t.hash ? asCategory(t.acceptedCategory) : null,
    proposed: asCategory(t.proposedCategory),
    reason: t.reason,
  }));
}

export const mcpServersPlugin: SourcePlugin<"mcp", McpSourceParts> = {
  id: "mcp",
  kind: "mcp",
  create({ db, assets }) {
    const source = createMcpModuleSource({ db, assets });
    return { source, moduleSources: [source] };
  },
  review: {
    pending: pendingTools,
    async accept(db, userId, input) {
      const item = (await pendingTools(db)).find((t) => t.capability === input.capability);
      if (!item) throw new AppError("NOT_FOUND", `${input.capability} is not an MCP tool waiting for review`);
      if (item.hash !== input.hash) {
        throw new AppError(
          "CONFLICT",
          `${input.capability} changed upstream since you looked (now ${item.hash.slice(0, 12)}); review it again`,
        );
      }
      const dot = input.capability.indexOf(".");
      const server = input.capability.slice(0, dot);
      const exportName = input.capability.slice(dot + 1);
      const rules = [{ glob: exportName, category: input.category }];
      const result = await categorizeTools(db, server, rules, userId, input.reason);
      const skipped = result.skipped[0];
      if (result.accepted.length === 0) {
        throw new AppError(
          "CONFLICT",
          `${input.capability} was not accepted: ${skipped?.reason ?? "no such tool"}`,
        );
      }
    },
  },
};
