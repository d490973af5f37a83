/**
 * MCP servers in the database: register (add, import), read (list, show), remove, status. The
 * tool list is kept by sync-tools.ts, an admin's categories by categorize.ts. An accepted tool
 * has an active Capability row (source "mcp", versionHash = the tool's hash), so the gate, the
 * console's Capabilities page, rules and "test a call" see it; a pending one has none active.
 */
import { diffLines } from "diff";
import { CATEGORIES, type Category } from "../../core/capabilities/types";
import { AppError } from "../../core/errors";
import type { Db } from "../../db";
import { type McpServerConfig, parseServerInput } from "./config";
import { sealSecret, secretNames } from "./secrets";
import type { UpstreamTool } from "./tools";

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

export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export function asCategory(value: string | null): Category | null {
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

export async function requireServer(db: Db, name: string) {
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
export const TOOL_DEFINITION = {
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
