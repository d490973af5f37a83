/**
 * The approval queue as the console shows it: pending requests, the decided history and the
 * active session grants, plus revoking a session's grants. Deciding goes through the engine's
 * approval service (compare-and-set, live event, wakes the waiting run), never through here.
 */
import { z } from "zod";
import type { ApprovalKind } from "../core/gate/ports";
import type { Db, Prisma } from "../db";
import { APPROVAL_FIELDS } from "../infra/approval-store";
import type { EventBus } from "../infra/events";
import { getEventBus } from "../infra/live";
import { getRunManifests, type RunManifest } from "./action-manifest";

const HISTORY_SIZE = 50;

const approvalSelect = {
  ...APPROVAL_FIELDS,
  decidedBy: { select: { displayName: true } },
  run: { select: { title: true, surface: true } },
} as const;

type ApprovalRow = Prisma.ApprovalGetPayload<{ select: typeof approvalSelect }>;

export type ApprovalView = ReturnType<typeof toView>;

function toView(row: ApprovalRow, keyNames: Map<string, string>) {
  const kind: ApprovalKind = row.kind === "uncertain" ? "uncertain" : "call";
  return {
    id: row.id,
    runId: row.runId,
    runTitle: row.run?.title ?? null,
    surface: row.run?.surface ?? null,
    sessionId: row.sessionId,
    capability: row.capability,
    category: row.category,
    /**
     * `call`: may this call run? `uncertain`: the call may already have happened (its server
     * process stopped inside the impl); allowing runs it again, denying ends the action.
     */
    kind,
    /** Canonical JSON of the snapshot the impl will receive; the UI parses and escapes it. */
    argsJson: row.argsSnapshot,
    argsHash: row.argsHash,
    requestedBy: row.requestedBy,
    apiKeyName: row.apiKeyId ? (keyNames.get(row.apiKeyId) ?? null) : null,
    status: row.status,
    scope: row.scope,
    decidedBy: row.decidedBy?.displayName ?? null,
    decidedAt: row.decidedAt?.toISOString() ?? null,
    /** Set when a session grant given on a sibling request answered this one. */
    grantId: row.grantId,
    /** False when an ask rule forces a prompt every time (or the call is uncertain): no session grant. */
    sessionGrantable: row.sessionGrantable && kind === "call",
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

export const HISTORY_DECISIONS = [
  "allowed_once",
  "allowed_session",
  "denied",
  "expired",
  "abandoned",
] as const;

const blankToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const day = z.preprocess(blankToUndefined, z.iso.date().optional()).catch(undefined);

export const historyFiltersSchema = z.object({
  /** A capability name; `module.*` matches every export of the module. */
  capability: z.preprocess(blankToUndefined, z.string().trim().max(200).optional()).catch(undefined),
  /** An API key id. */
  key: z.preprocess(blankToUndefined, z.string().max(100).optional()).catch(undefined),
  /** A user id: requests this user asked for or answered. */
  user: z.preprocess(blankToUndefined, z.string().max(100).optional()).catch(undefined),
  decision: z.preprocess(blankToUndefined, z.enum(HISTORY_DECISIONS).optional()).catch(undefined),
  /** Settled on or after this day (YYYY-MM-DD, UTC). */
  from: day,
  /** Settled on or before this day (YYYY-MM-DD, UTC). */
  to: day,
});
export type HistoryFilters = z.infer<typeof historyFiltersSchema>;

function historyWhere(f: HistoryFilters) {
  const decision =
    f.decision === "allowed_once"
      ? { status: "allowed", scope: "once" }
      : f.decision === "allowed_session"
        ? { status: "allowed", scope: "session" }
        : f.decision
          ? { status: f.decision }
          : { status: { in: ["allowed", "denied", "expired"] } };
  return {
    ...decision,
    ...(f.capability
      ? {
          capability: f.capability.endsWith(".*") ? { startsWith: f.capability.slice(0, -1) } : f.capability,
        }
      : {}),
    ...(f.key ? { apiKeyId: f.key } : {}),
    ...(f.user ? { OR: [{ requesterUserId: f.user }, { decidedById: f.user }] } : {}),
  };
}

/** When a request left the queue: answered at decidedAt; an expired one at its expiry. */
const settledAt = (r: { decidedAt: Date | null; expiresAt: Date }) => r.decidedAt ?? r.expiresAt;

/**
 * Decided and expired requests, the most recently settled first. Answered and expired rows are
 * read in their own order (decidedAt, expiresAt) and merged, since neither column alone orders both.
 */
export async function listApprovalHistory(db: Db, filters: HistoryFilters = {}) {
  const where = historyWhere(filters);
  const range = (column: "decidedAt" | "expiresAt") => {
    const bounds: { gte?: Date; lt?: Date } = {};
    if (filters.from) bounds.gte = new Date(`${filters.from}T00:00:00.000Z`);
    if (filters.to) bounds.lt = new Date(new Date(`${filters.to}T00:00:00.000Z`).getTime() + 86_400_000);
    return filters.from || filters.to ? { [column]: bounds } : {};
  };
  const wantsAnswered = filters.decision !== "expired";
  const wantsExpired = !filters.decision || filters.decision === "expired";
  const [answered, expired] = await Promise.all([
    wantsAnswered
      ? db.approval.findMany({
          where: { AND: [where, { status: { not: "expired" } }, range("decidedAt")] },
          orderBy: [{ decidedAt: "desc" }, { id: "desc" }],
          take: HISTORY_SIZE,
          select: approvalSelect,
        })
      : [],
    wantsExpired
      ? db.approval.findMany({
          where: { AND: [where, { status: "expired" }, range("expiresAt")] },
          orderBy: [{ expiresAt: "desc" }, { id: "desc" }],
          take: HISTORY_SIZE,
          select: approvalSelect,
        })
      : [],
  ]);
  const rows = [...answered, ...expired]
    .sort((a, b) => settledAt(b).getTime() - settledAt(a).getTime())
    .slice(0, HISTORY_SIZE);
  const names = await keyNames(db, rows);
  return rows.map((r) => toView(r, names));
}

/** Choices for the history filter bar: keys and users. */
export async function historyFilterOptions(db: Db) {
  const [keys, users] = await Promise.all([
    db.apiKey.findMany({ orderBy: { createdAt: "desc" }, select: { id: true, name: true } }),
    db.user.findMany({ orderBy: { username: "asc" }, select: { id: true, displayName: true } }),
  ]);
  return { keys, users };
}

export type PendingApprovalView = ApprovalView & { manifest: RunManifest | null };

export async function listApprovalQueue(db: Db, filters: HistoryFilters = {}) {
  const [pending, history, grants] = await Promise.all([
    db.approval.findMany({
      where: { status: "pending" },
      orderBy: { createdAt: "asc" },
      take: 200,
      select: approvalSelect,
    }),
    listApprovalHistory(db, filters),
    listActiveGrants(db),
  ]);
  const [names, manifests] = await Promise.all([
    keyNames(db, pending),
    getRunManifests(
      db,
      pending.map((p) => p.runId).filter((v): v is string => !!v),
    ),
  ]);
  return {
    pending: pending.map(
      (r): PendingApprovalView => ({
        ...toView(r, names),
        manifest: r.runId ? (manifests.get(r.runId) ?? null) : null,
      }),
    ),
    history,
    grants,
  };
}

/** One request as its own page shows it (the link in a notification): pending with its manifest, or settled. */
export async function getApprovalCard(db: Db, id: string): Promise<PendingApprovalView | null> {
  const row = await db.approval.findUnique({ where: { id }, select: approvalSelect });
  if (!row) return null;
  const [names, manifests] = await Promise.all([
    keyNames(db, [row]),
    row.runId ? getRunManifests(db, [row.runId]) : Promise.resolve(new Map<string, RunManifest>()),
  ]);
  return { ...toView(row, names), manifest: row.runId ? (manifests.get(row.runId) ?? null) : null };
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
