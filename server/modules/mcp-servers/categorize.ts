/**
 * An admin's categories for an MCP server's tools, written at each tool's current hash: the
 * tool becomes importable, its Capability row (source "mcp") carries the category, and the change
 * is kept in the category history. `'<tool-glob>=<category>'` is how the CLI and console say it.
 */
import { CATEGORIES, type Category } from "../../core/capabilities/types";
import { AppError } from "../../core/errors";
import type { Db } from "../../db";
import { asCategory, requireServer, TOOL_DEFINITION, wireName } from "./servers";

/** `*` matches any run of characters; a glob matches a tool's upstream or export name. */
export function globMatches(glob: string, name: string): boolean {
  const pattern = glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${pattern}$`).test(name);
}

export interface CategorizeRule {
  glob: string;
  /** A category, or "proposed" to accept each tool's proposal. */
  category: Category | "proposed";
}

/** `'<tool-glob>=<category>'` as the CLI takes it. */
export function parseCategorizeRule(text: string): CategorizeRule {
  const at = text.lastIndexOf("=");
  const glob = at > 0 ? text.slice(0, at).trim() : "";
  const category = at > 0 ? text.slice(at + 1).trim() : "";
  if (!glob || !(category === "proposed" || (CATEGORIES as readonly string[]).includes(category))) {
    throw new AppError(
      "BAD_INPUT",
      `"${text}" is not <tool-glob>=<category>; the category is one of ${CATEGORIES.join(", ")} or "proposed"`,
    );
  }
  return { glob, category: category as CategorizeRule["category"] };
}

export interface CategorizeResult {
  accepted: { tool: string; capability: string; category: Category }[];
  skipped: { tool: string; reason: string }[];
}

/**
 * An admin's categories for the server's tools as they are now (the current hash). The first rule
 * whose glob matches a tool decides it. Accepting makes the tool importable: its Capability row
 * is written with the tool's hash, and the change is kept in the category history.
 */
export async function categorizeTools(
  db: Db,
  server: string,
  rules: CategorizeRule[],
  changedById: string | null,
  /** The admin's words, kept in the category history beside the tool's version. */
  because?: string,
): Promise<CategorizeResult> {
  if (rules.length === 0) throw new AppError("BAD_INPUT", "give at least one <tool-glob>=<category>");
  const row = await db.mcpServer.findUnique({
    where: { name: server },
    select: {
      id: true,
      tools: {
        select: { ...TOOL_DEFINITION, proposedCategory: true },
      },
    },
  });
  if (!row) await requireServer(db, server);
  const result: CategorizeResult = { accepted: [], skipped: [] };
  const matched = new Set<string>();
  for (const tool of row?.tools ?? []) {
    const rule = rules.find((r) => globMatches(r.glob, tool.name) || globMatches(r.glob, tool.exportName));
    if (!rule) continue;
    matched.add(rule.glob);
    if (tool.status === "collision") {
      result.skipped.push({ tool: tool.name, reason: "its export name collides with another tool's" });
      continue;
    }
    const category = rule.category === "proposed" ? asCategory(tool.proposedCategory) : rule.category;
    if (!category) {
      result.skipped.push({
        tool: tool.name,
        reason: "no category was proposed (no annotations); set one, e.g. '<tool>=read'",
      });
      continue;
    }
    const capability = wireName(server, tool.exportName);
    await db.mcpTool.update({
      where: { id: tool.id },
      data: {
        acceptedCategory: category,
        acceptedHash: tool.hash,
        status: "accepted",
        reason: "",
        previous: null,
      },
      select: { id: true },
    });
    const prior = await db.capability.findUnique({
      where: { name: capability },
      select: { id: true, category: true, active: true, source: true },
    });
    if (prior && prior.source !== "mcp") {
      result.skipped.push({
        tool: tool.name,
        reason: `"${capability}" is taken by a ${prior.source} capability`,
      });
      continue;
    }
    const data = {
      module: server,
      exportName: tool.exportName,
      source: "mcp",
      category,
      declaredCategory: asCategory(tool.proposedCategory) ?? category,
      pendingCategory: null,
      description: tool.description,
      inputSchema: tool.inputSchema,
      versionHash: tool.hash,
      active: true,
    };
    const saved = prior
      ? await db.capability.update({ where: { id: prior.id }, data, select: { id: true } })
      : await db.capability.create({ data: { name: capability, ...data }, select: { id: true } });
    if (!prior || prior.category !== category || !prior.active) {
      await db.categoryChange.create({
        data: {
          capabilityId: saved.id,
          fromCategory: prior?.active ? prior.category : null,
          toCategory: category,
          reason:
            (rule.category === "proposed"
              ? `MCP tool ${server}/${tool.name}: accepted the proposed category (version ${tool.hash.slice(0, 12)})`
              : `MCP tool ${server}/${tool.name}: set by an admin (version ${tool.hash.slice(0, 12)})`) +
            (because ? `: ${because}` : ""),
          changedById,
        },
        select: { id: true },
      });
    }
    result.accepted.push({ tool: tool.name, capability, category });
  }
  const unmatched = rules.filter((r) => !matched.has(r.glob));
  if (unmatched.length > 0 && result.accepted.length === 0 && result.skipped.length === 0) {
    const known = (row?.tools ?? []).map((t) => t.name);
    throw new AppError(
      "NOT_FOUND",
      `no tool of "${server}" matches ${unmatched.map((r) => `"${r.glob}"`).join(", ")}${known.length ? ` (tools: ${known.join(", ")})` : " (no tools listed yet: the server has not been reached)"}`,
    );
  }
  return result;
}
