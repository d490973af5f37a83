/**
 * Approvals and session grants in the database. Every state change is a single conditional
 * UPDATE (updateMany with the expected state in the WHERE clause): compare-and-set without
 * interactive transactions, which SQLite's shared connection cannot isolate.
 */

import { isCategory } from "../core/capabilities/registry";
import type {
  ApprovalRecord,
  ApprovalScope,
  ApprovalStatus,
  ApprovalStore,
  GrantStore,
  SessionGrant,
} from "../core/gate/ports";
import type { Db, Prisma } from "../db";

/** Every column of an approval the gate reads (the console's queue selects these too). */
export const APPROVAL_FIELDS = {
  id: true,
  runId: true,
  sessionId: true,
  capability: true,
  category: true,
  versionHash: true,
  argsSnapshot: true,
  argsHash: true,
  requestedBy: true,
  requesterUserId: true,
  apiKeyId: true,
  status: true,
  scope: true,
  decidedById: true,
  decidedAt: true,
  consumedAt: true,
  expiresAt: true,
  createdAt: true,
  sessionGrantable: true,
  grantId: true,
  endReason: true,
  kind: true,
} as const;

const approvalSelect = APPROVAL_FIELDS;

type ApprovalRow = Prisma.ApprovalGetPayload<{ select: typeof approvalSelect }>;

function toRecord(row: ApprovalRow): ApprovalRecord {
  return {
    ...row,
    // A row with a category the gate does not know cannot have been written by the engine.
    category: isCategory(row.category) ? row.category : "execute",
    status: row.status as ApprovalStatus,
    scope: row.scope as ApprovalScope | null,
    kind: row.kind === "uncertain" ? "uncertain" : "call",
    decidedAt: row.decidedAt?.getTime() ?? null,
    consumedAt: row.consumedAt?.getTime() ?? null,
    expiresAt: row.expiresAt.getTime(),
    createdAt: row.createdAt.getTime(),
  };
}

export function createPrismaApprovalStore(db: Db): ApprovalStore {
  return {
    async create({ ttlMs: _ttl, ...input }) {
      const row = await db.approval.create({
        data: { ...input, expiresAt: new Date(input.expiresAt) },
        select: approvalSelect,
      });
      return toRecord(row);
    },
    async get(id) {
      const row = await db.approval.findUnique({ where: { id }, select: approvalSelect });
      return row ? toRecord(row) : null;
    },
    async getMany(ids) {
      const rows = await db.approval.findMany({ where: { id: { in: ids } }, select: approvalSelect });
      return rows.map(toRecord);
    },
    async decide(id, change, now) {
      const { count } = await db.approval.updateMany({
        where: { id, status: "pending", expiresAt: { gt: new Date(now) } },
        data: {
          status: change.status,
          scope: change.scope,
          decidedById: change.decidedById,
          decidedAt: new Date(now),
          ...(change.grantId ? { grantId: change.grantId } : {}),
        },
      });
      return count === 1;
    },
    async consume(id, argsHash, now) {
      const { count } = await db.approval.updateMany({
        where: { id, status: "allowed", consumedAt: null, argsHash },
        data: { consumedAt: new Date(now) },
      });
      return count === 1;
    },
    async expire(id, reason) {
      const { count } = await db.approval.updateMany({
        where: { id, status: "pending" },
        data: { status: "expired", endReason: reason ?? null },
      });
      return count === 1;
    },
    async abandon(id, reason) {
      const { count } = await db.approval.updateMany({
        where: { id, status: "allowed", consumedAt: null },
        data: { status: "abandoned", endReason: reason },
      });
      return count === 1;
    },
    async listOpenForRun(runId) {
      const rows = await db.approval.findMany({
        where: { runId, OR: [{ status: "pending" }, { status: "allowed", consumedAt: null }] },
        select: approvalSelect,
      });
      return rows.map(toRecord);
    },
    async listPending(filter) {
      const due = filter?.expiresBy === undefined ? {} : { expiresAt: { lte: new Date(filter.expiresBy) } };
      const parkedAt = filter?.exceptParkedAt;
      const unparked =
        parkedAt === undefined
          ? {}
          : {
              OR: [
                { runId: null },
                { run: { status: { not: "waiting" } } },
                { expiresAt: { lte: new Date(parkedAt) } },
              ],
            };
      const rows = await db.approval.findMany({
        where: { status: "pending", ...due, ...unparked },
        select: approvalSelect,
      });
      return rows.map(toRecord);
    },
    async listAllowedUnconsumed() {
      const rows = await db.approval.findMany({
        where: { status: "allowed", consumedAt: null },
        select: approvalSelect,
      });
      return rows.map(toRecord);
    },
  };
}

export function createPrismaGrantStore(db: Db): GrantStore {
  const toGrant = (row: Omit<SessionGrant, "createdAt"> & { createdAt: Date }): SessionGrant => ({
    ...row,
    createdAt: row.createdAt.getTime(),
  });
  const select = {
    id: true,
    sessionId: true,
    capability: true,
    versionHash: true,
    approvalId: true,
    grantedById: true,
    createdAt: true,
  } as const;
  return {
    async findActive(sessionId, capability, versionHash) {
      const row = await db.sessionGrant.findFirst({
        where: { sessionId, capability, versionHash, revokedAt: null },
        select,
      });
      return row ? toGrant(row) : null;
    },
    async create(grant) {
      return toGrant(await db.sessionGrant.create({ data: grant, select }));
    },
  };
}
