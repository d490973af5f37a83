/**
 * The approval queue as the console shows it: pending requests, the decided history and the
 * active session grants, plus revoking a session's grants. Deciding goes through the engine's
 * approval service (compare-and-set, live event, wakes the waiting run), never through here.
 */
import type { Db } from "../db";
import type { EventBus } from "./events";
import { getEventBus } from "./live";

const HISTORY_SIZE = 50;

const approvalSelect = {
  id: true,
  runId: true,
  sessionId: true,
  capability: true,
  category: true,
  argsSnapshot: true,
  argsHash: true,
  requestedBy: true,
  apiKeyId: true,
  status: true,
  scope: true,
  decidedAt: true,
  expiresAt: true,
  createdAt: true,
  endReason: true,
  decidedBy: { select: { displayName: true } },
  run: { select: { title: true, surface: true } },
} as const;

type ApprovalRow = {
  id: string;
  runId: string | null;
  sessionId: string;
  capability: string;
  category: string;
  argsSnapshot: string;
  argsHash: string;
  requestedBy: string;
  apiKeyId: string | null;
  status: string;
  scope: string | null;
  decidedAt: Date | null;
  expiresAt: Date;
  createdAt: Date;
  endReason: string | null;
  decidedBy: { displayName: string } | null;
  run: { title: string; surface: string } | null;
};

export type ApprovalView = ReturnType<typeof toView>;

function toView(row: ApprovalRow, keyNames: Map<string, string>) {
  return {
    id: row.id,
    runId: row.runId,
    runTitle: row.run?.title ?? null,
    surface: row.run?.surface ?? null,
    sessionId: row.sessionId,
    capability: row.capability,
    category: row.category,
    /** Canonical JSON of the snapshot the impl will receive; the UI parses and escapes it. */
    argsJson: row.argsSnapshot,
    argsHash: row.argsHash,
    requestedBy: row.requestedBy,
    apiKeyName: row.apiKeyId ? (keyNames.get(row.apiKeyId) ?? null) : null,
    status: row.status,
    scope: row.scope,
    decidedBy: row.decidedBy?.displayName ?? null,
    decidedAt: row.decidedAt?.toISOString() ?? null,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    /** Why an expired or abandoned request ended (the run died, was cancelled), when known. */
    endReason: row.endReason,
  };
}

async function keyNames(db: Db, rows: { apiKeyId: string | null }[]) {
  const ids = [...new Set(rows.map((r) => r.apiKeyId).filter((v): v is string => !!v))];
  if (ids.length === 0) return new Map<string, string>();
  const keys = await db.apiKey.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } });
  return new Map(keys.map((k) => [k.id, k.name]));
}

export async function listApprovalQueue(db: Db) {
  const [pending, history, grants] = await Promise.all([
    db.approval.findMany({
      where: { status: "pending" },
      orderBy: { createdAt: "asc" },
      take: 200,
      select: approvalSelect,
    }),
    db.approval.findMany({
      where: { status: { not: "pending" } },
      orderBy: { createdAt: "desc" },
      take: HISTORY_SIZE,
      select: approvalSelect,
    }),
    listActiveGrants(db),
  ]);
  const names = await keyNames(db, [...pending, ...history]);
  return {
    pending: pending.map((r) => toView(r, names)),
    history: history.map((r) => toView(r, names)),
    grants,
  };
}

export function countPendingApprovals(db: Db): Promise<number> {
  return db.approval.count({ where: { status: "pending", expiresAt: { gt: new Date() } } });
}

/** Unrevoked session grants grouped by session, labelled with who asked for them. */
export async function listActiveGrants(db: Db) {
  const rows = await db.sessionGrant.findMany({
    where: { revokedAt: null },
    orderBy: { createdAt: "desc" },
    take: 500,
    select: { id: true, sessionId: true, capability: true, approvalId: true, createdAt: true },
  });
  const approvalIds = [...new Set(rows.map((r) => r.approvalId).filter((v): v is string => !!v))];
  const labels = await db.approval.findMany({
    where: { id: { in: approvalIds } },
    select: { id: true, requestedBy: true, decidedBy: { select: { displayName: true } } },
  });
  const byId = new Map(labels.map((a) => [a.id, a]));
  const sessions = new Map<
    string,
    {
      sessionId: string;
      label: string;
      capabilities: { capability: string; grantedBy: string | null; at: string }[];
    }
  >();
  for (const row of rows) {
    const approval = row.approvalId ? byId.get(row.approvalId) : undefined;
    const entry = sessions.get(row.sessionId) ?? {
      sessionId: row.sessionId,
      label: approval?.requestedBy ?? "unknown session",
      capabilities: [],
    };
    entry.capabilities.push({
      capability: row.capability,
      grantedBy: approval?.decidedBy?.displayName ?? null,
      at: row.createdAt.toISOString(),
    });
    sessions.set(row.sessionId, entry);
  }
  return [...sessions.values()];
}

/** Revokes every active grant of one session; the next call of that session asks again. */
export async function revokeSessionGrants(
  db: Db,
  sessionId: string,
  by: { username: string },
  bus: EventBus = getEventBus(),
) {
  const { count } = await db.sessionGrant.updateMany({
    where: { sessionId, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  if (count > 0) await bus.publish("grants.revoked", { sessionId, count, by: by.username });
  return { revoked: count };
}
