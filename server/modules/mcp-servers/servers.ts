/**
 * MCP servers in the database: register (add, import), read (list, show), remove, the tool list
 * as last seen upstream (pinned per tool by a hash), and an admin's categories. An accepted tool
 * has an active Capability row (source "mcp", versionHash = the tool's hash), so the gate, the
 * console's Capabilities page, rules and "test a call" see it; a pending one has none active.
 */
import { diffLines } from "diff";
import { CATEGORIES, type Category } from "../../core/capabilities/types";
import { AppError } from "../../core/errors";
import type { Db } from "../../db";
import { type McpServerConfig, parseServerInput } from "./config";
import { sealSecret, secretNames } from "./secrets";
import { assignExportNames, proposeCategory, toolHash, type UpstreamTool } from "./tools";

export type McpToolStatus = "pending" | "accepted" | "collision";

export interface McpToolView {
  name: string;
  exportName: string;
  /** Wire name `server.export`. */
  capability: string;
  description: string;
  inputSchema: unknown;
  annotations: Record<string, unknown>;
  hash: string;
  proposedCategory: Category | null;
  acceptedCategory: Category | null;
  /** The category the gate uses (the Capabilities page may have changed it); null unless accepted. */
  effectiveCategory: Category | null;
  status: McpToolStatus;
  reason: string;
  /** The definition accepted before the upstream changed it, for the diff. */
  previous: UpstreamTool | null;
  /** Lines of the change from `previous` to now: "+ ", "- " or "  " first. */
  diff: string[] | null;
}

function pretty(tool: UpstreamTool): string {
  return `${JSON.stringify(tool, null, 2)}\n`;
}

/** Line diff of two definitions (pretty JSON). */
export function diffTools(before: UpstreamTool, after: UpstreamTool): string[] {
  return diffLines(pretty(before), pretty(after)).flatMap((part) =>
    part.value
      .replace(/\n$/, "")
      .split("\n")
      .map((line) => `${part.added ? "+" : part.removed ? "-" : " "} ${line}`),
  );
}

export interface McpServerSummary {
  name: string;
  transport: "stdio" | "http";
  target: string;
  enabled: boolean;
  status: string;
  lastError: string | null;
  tools: number;
  accepted: number;
  pending: number;
  updatedAt: Date;
}

export interface McpServerDetail extends McpServerSummary {
  command: string | null;
  args: string[];
  env: Record<string, string>;
  url: string | null;
  headers: Record<string, string>;
  callTimeoutMs: number;
  stderrTail: string;
  problems: string[];
  /** Names of stored secrets (never values) and the names env/headers refer to. */
  secrets: string[];
  missingSecrets: string[];
  toolsSyncedAt: Date | null;
  toolList: McpToolView[];
}

function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

function asCategory(value: string | null): Category | null {
  return value && (CATEGORIES as readonly string[]).includes(value) ? (value as Category) : null;
}

export function wireName(server: string, exportName: string): string {
  return `${server}.${exportName}`;
}

/** Registers a server or replaces its configuration (tools and categories are kept). */
export async function saveServer(
  db: Db,
  input: unknown,
  options: { replace?: boolean } = {},
): Promise<{ name: string; created: boolean }> {
  const config: McpServerConfig = parseServerInput(input);
  const clash = await db.toolset.findUnique({ where: { name: config.name }, select: { id: true } });
  if (clash) {
    throw new AppError(
      "BAD_INPUT",
      `"${config.name}" is already a toolset's module name; choose another server name`,
    );
  }
  const data = {
    transport: config.transport,
    command: config.transport === "stdio" ? (config.command ?? null) : null,
    args: JSON.stringify(config.transport === "stdio" ? config.args : []),
    env: JSON.stringify(config.transport === "stdio" ? config.env : {}),
    url: config.transport === "http" ? (config.url ?? null) : null,
    headers: JSON.stringify(config.transport === "http" ? config.headers : {}),
    callTimeoutMs: config.callTimeoutMs,
    enabled: config.enabled,
    status: "new",
    lastError: null,
  };
  const existing = await db.mcpServer.findUnique({ where: { name: config.name }, select: { id: true } });
  if (existing && !options.replace) {
    throw new AppError(
      "CONFLICT",
      `an MCP server named "${config.name}" exists; remove it first or edit it on its page`,
    );
  }
  const row = existing
    ? await db.mcpServer.update({ where: { id: existing.id }, data, select: { id: true } })
    : await db.mcpServer.create({ data: { name: config.name, ...data }, select: { id: true } });
  for (const [name, value] of Object.entries(config.secrets)) {
    await setServerSecret(db, config.name, name, value, row.id);
  }
  return { name: config.name, created: !existing };
}

export async function setServerSecret(
  db: Db,
  server: string,
  name: string,
  value: string,
  serverId?: string,
): Promise<void> {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new AppError("BAD_INPUT", `secret name "${name}" must be letters, digits and _`);
  }
  if (!value) throw new AppError("BAD_INPUT", `secret "${name}" needs a value`);
  const id = serverId ?? (await requireServer(db, server)).id;
  const sealed = await sealSecret(db, id, name, value);
  await db.mcpServerSecret.upsert({
    where: { serverId_name: { serverId: id, name } },
    create: { serverId: id, name, sealed },
    update: { sealed },
    select: { id: true },
  });
  // The next connection opens the new value.
  await db.mcpServer.update({ where: { id }, data: { status: "new" }, select: { id: true } });
}

async function requireServer(db: Db, name: string) {
  const row = await db.mcpServer.findUnique({ where: { name }, select: { id: true, name: true } });
  if (!row) {
    const known = await db.mcpServer.findMany({ select: { name: true }, orderBy: { name: "asc" } });
    throw new AppError(
      "NOT_FOUND",
      `no MCP server named "${name}"${known.length ? ` (known: ${known.map((k) => k.name).join(", ")})` : "; add one with `mcp-servers add` or `mcp-servers import`"}`,
    );
  }
  return row;
}

export async function removeServer(db: Db, name: string): Promise<void> {
  const row = await requireServer(db, name);
  await db.capability.updateMany({ where: { module: name, source: "mcp" }, data: { active: false } });
  await db.mcpServer.delete({ where: { id: row.id }, select: { id: true } });
}

/** The columns a connection is made from (module-source.ts connects with them). */
export const CONNECTION_FIELDS = {
  id: true,
  name: true,
  transport: true,
  command: true,
  args: true,
  env: true,
  url: true,
  headers: true,
  callTimeoutMs: true,
} as const;

/** An upstream tool's definition as stored: what its hash covers, and where it stands. */
const TOOL_DEFINITION = {
  id: true,
  name: true,
  exportName: true,
  description: true,
  inputSchema: true,
  hash: true,
  status: true,
} as const;

const serverSelect = {
  ...CONNECTION_FIELDS,
  enabled: true,
  status: true,
  lastError: true,
  stderrTail: true,
  problems: true,
  toolsSyncedAt: true,
  updatedAt: true,
  tools: {
    orderBy: { name: "asc" as const },
    select: {
      name: true,
      exportName: true,
      description: true,
      inputSchema: true,
      annotations: true,
      hash: true,
      proposedCategory: true,
      acceptedCategory: true,
      status: true,
      reason: true,
      previous: true,
    },
  },
  secrets: { select: { name: true }, orderBy: { name: "asc" as const } },
};

type ServerRow = NonNullable<Awaited<ReturnType<typeof findServerRow>>>;

function findServerRow(db: Db, name: string) {
  return db.mcpServer.findUnique({ where: { name }, select: serverSelect });
}

function summaryOf(row: ServerRow): McpServerSummary {
  const accepted = row.tools.filter((t) => t.status === "accepted").length;
  return {
    name: row.name,
    transport: row.transport === "http" ? "http" : "stdio",
    target:
      row.transport === "http"
        ? (row.url ?? "")
        : [row.command ?? "", ...parseJson<string[]>(row.args, [])].join(" "),
    enabled: row.enabled,
    status: row.status,
    lastError: row.lastError,
    tools: row.tools.length,
    accepted,
    pending: row.tools.length - accepted,
    updatedAt: row.updatedAt,
  };
}

export async function listServers(db: Db): Promise<McpServerSummary[]> {
  const rows = await db.mcpServer.findMany({ orderBy: { name: "asc" }, select: serverSelect });
  return rows.map(summaryOf);
}

export async function getServer(db: Db, name: string): Promise<McpServerDetail> {
  await requireServer(db, name);
  const row = (await findServerRow(db, name)) as ServerRow;
  const caps = await db.capability.findMany({
    where: { module: name, source: "mcp", active: true },
    select: { name: true, category: true },
  });
  const effective = new Map(caps.map((c) => [c.name, asCategory(c.category)]));
  const env = parseJson<Record<string, string>>(row.env, {});
  const headers = parseJson<Record<string, string>>(row.headers, {});
  const stored = row.secrets.map((s) => s.name);
  const named = [...Object.values(env), ...Object.values(headers)].flatMap(secretNames);
  return {
    ...summaryOf(row),
    command: row.command,
    args: parseJson<string[]>(row.args, []),
    env,
    url: row.url,
    headers,
    callTimeoutMs: row.callTimeoutMs,
    stderrTail: row.stderrTail,
    problems: parseJson<string[]>(row.problems, []),
    secrets: stored,
    missingSecrets: [...new Set(named)].filter((n) => !stored.includes(n)),
    toolsSyncedAt: row.toolsSyncedAt,
    toolList: row.tools.map((t) => {
      const status: McpToolStatus =
        t.status === "accepted" ? "accepted" : t.status === "collision" ? "collision" : "pending";
      const capability = wireName(name, t.exportName);
      const previous = parseJson<UpstreamTool | null>(t.previous, null);
      const current: UpstreamTool = {
        name: t.name,
        description: t.description,
        inputSchema: parseJson<Record<string, unknown>>(t.inputSchema, {}),
        annotations: parseJson<Record<string, unknown>>(t.annotations, {}),
      };
      return {
        name: t.name,
        exportName: t.exportName,
        capability,
        description: t.description,
        inputSchema: parseJson<unknown>(t.inputSchema, {}),
        annotations: parseJson<Record<string, unknown>>(t.annotations, {}),
        hash: t.hash,
        proposedCategory: asCategory(t.proposedCategory),
        acceptedCategory: asCategory(t.acceptedCategory),
        effectiveCategory: status === "accepted" ? (effective.get(capability) ?? null) : null,
        status,
        reason: t.reason,
        previous,
        diff: previous ? diffTools(previous, current) : null,
      };
    }),
  };
}

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

/** Connection status as the server's page shows it. */
export async function setServerStatus(
  db: Db,
  name: string,
  status: { status: string; lastError?: string | null; stderrTail?: string },
): Promise<void> {
  await db.mcpServer.updateMany({
    where: { name },
    data: {
      status: status.status,
      ...(status.lastError !== undefined ? { lastError: status.lastError?.slice(0, 4000) ?? null } : {}),
      ...(status.stderrTail !== undefined ? { stderrTail: status.stderrTail } : {}),
    },
  });
}
