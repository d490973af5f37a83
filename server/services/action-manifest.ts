/**
 * The pre-flight manifest of runs as the approval card and the run page show it: what the action
 * imports and can reach (with the categories the gate uses), the calls it made so far with their
 * decisions, its code with the call sites, and for MCP runs the client, the key and its owner.
 * Read from stored rows and the action's source; nothing is run.
 */
import {
  type ActionManifest,
  type ManifestCallSite,
  type ManifestImport,
  readActionManifest,
} from "../core/actions/manifest";
import type { Db } from "../db";

export interface ManifestCall {
  capability: string;
  category: string;
  /** allow | deny | blocked, or waiting for a request nobody answered yet. */
  decision: string;
  reason: string;
  at: string;
}

export interface RunManifest {
  runId: string;
  surface: string;
  code: string;
  imports: ManifestImport[];
  /** Capabilities the imports reach; `category` is null when the capability is not (or no longer) known. */
  reachable: { capability: string; category: string | null }[];
  callSites: ManifestCallSite[];
  calls: ManifestCall[];
  parseError: string | null;
  /** MCP runs: the client as it named itself in `initialize`. */
  client: { name: string; version: string } | null;
  key: { name: string; owner: string } | null;
}

const MCP_SESSION_PREFIX = "mcp:";
const CACHE_SIZE = 500;

/**
 * A run's code never changes, and the queue is re-read on every live event: parse each action
 * once (a 200 KB action takes acorn a large fraction of a second on a busy machine).
 */
const parsedByRun = new Map<string, ActionManifest>();
function manifestOf(runId: string, code: string): ActionManifest {
  const hit = parsedByRun.get(runId);
  if (hit) return hit;
  const manifest = readActionManifest(code);
  if (parsedByRun.size >= CACHE_SIZE) {
    const oldest = parsedByRun.keys().next().value;
    if (oldest !== undefined) parsedByRun.delete(oldest);
  }
  parsedByRun.set(runId, manifest);
  return manifest;
}

export async function getRunManifests(db: Db, runIds: string[]): Promise<Map<string, RunManifest>> {
  const ids = [...new Set(runIds)];
  const out = new Map<string, RunManifest>();
  if (ids.length === 0) return out;
  const runs = await db.actionRun.findMany({
    where: { id: { in: ids } },
    select: {
      id: true,
      sessionId: true,
      surface: true,
      code: true,
      apiKeyId: true,
      decisions: {
        orderBy: { createdAt: "asc" },
        select: {
          capability: true,
          category: true,
          decision: true,
          reason: true,
          approvalId: true,
          createdAt: true,
        },
      },
      approvals: {
        where: { status: "pending" },
        orderBy: { createdAt: "asc" },
        select: { id: true, capability: true, category: true, createdAt: true },
      },
    },
  });
  const parsed = new Map(runs.map((r) => [r.id, manifestOf(r.id, r.code)]));

  const exact = new Set<string>();
  const wholeModules = new Set<string>();
  for (const m of parsed.values()) {
    for (const imp of m.imports) {
      for (const name of imp.names) {
        if (name === "*") wholeModules.add(imp.module);
        else exact.add(`${imp.module}.${name}`);
      }
    }
  }
  const keyIds = [...new Set(runs.map((r) => r.apiKeyId).filter((v): v is string => !!v))];
  const mcpIds = runs
    .filter((r) => r.sessionId.startsWith(MCP_SESSION_PREFIX))
    .map((r) => r.sessionId.slice(MCP_SESSION_PREFIX.length));
  const [capabilities, keys, clients] = await Promise.all([
    exact.size + wholeModules.size === 0
      ? []
      : db.capability.findMany({
          where: {
            active: true,
            OR: [{ name: { in: [...exact] } }, { module: { in: [...wholeModules] } }],
          },
          select: { name: true, module: true, category: true },
        }),
    keyIds.length === 0
      ? []
      : db.apiKey.findMany({
          where: { id: { in: keyIds } },
          select: { id: true, name: true, user: { select: { displayName: true, username: true } } },
        }),
    mcpIds.length === 0
      ? []
      : db.mcpSession.findMany({
          where: { id: { in: mcpIds } },
          select: { id: true, clientName: true, clientVersion: true },
        }),
  ]);
  const categoryOf = new Map(capabilities.map((c) => [c.name, c.category]));
  const keyById = new Map(keys.map((k) => [k.id, k]));
  const clientById = new Map(clients.map((c) => [c.id, c]));

  for (const run of runs) {
    const m = parsed.get(run.id) ?? manifestOf(run.id, run.code);
    const reachable = new Map<string, string | null>();
    for (const imp of m.imports) {
      for (const name of imp.names) {
        if (name !== "*") {
          const capability = `${imp.module}.${name}`;
          reachable.set(capability, categoryOf.get(capability) ?? null);
        }
      }
      if (imp.names.includes("*")) {
        for (const c of capabilities) if (c.module === imp.module) reachable.set(c.name, c.category);
      }
    }
    const key = run.apiKeyId ? keyById.get(run.apiKeyId) : undefined;
    const client = run.sessionId.startsWith(MCP_SESSION_PREFIX)
      ? clientById.get(run.sessionId.slice(MCP_SESSION_PREFIX.length))
      : undefined;
    out.set(run.id, {
      runId: run.id,
      surface: run.surface,
      code: run.code,
      imports: m.imports,
      reachable: [...reachable]
        .map(([capability, category]) => ({ capability, category }))
        .sort((a, b) => a.capability.localeCompare(b.capability)),
      callSites: m.callSites,
      calls: [
        // A durable run journals the call it waits on; its pending approval below stands for it.
        ...run.decisions
          .filter((d) => !d.approvalId || !run.approvals.some((a) => a.id === d.approvalId))
          .map((d) => ({
            capability: d.capability,
            category: d.category,
            decision: d.decision,
            reason: d.reason,
            at: d.createdAt.toISOString(),
          })),
        ...run.approvals.map((a) => ({
          capability: a.capability,
          category: a.category,
          decision: "waiting",
          reason: "waiting for a human",
          at: a.createdAt.toISOString(),
        })),
      ],
      parseError: m.parseError,
      client: client ? { name: client.clientName || "unnamed client", version: client.clientVersion } : null,
      key: key ? { name: key.name, owner: key.user.displayName || key.user.username } : null,
    });
  }
  return out;
}
