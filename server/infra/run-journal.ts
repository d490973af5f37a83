/**
 * The durable-action half of the run store: a run as a replay needs it, its call journal (the
 * run's GateDecisionRecord rows with `seq`), parking, and the lease (a fencing token that every
 * instance taking the run over increments, and that the run's durable writes are checked
 * against).
 */
import { sqltag as sql } from "@prisma/client/runtime/client";
import type { ObservationEnvelope } from "../core/actions/envelope";
import type { RunContext, RunStatus, RunStore, StoredRun } from "../core/actions/ports";
import { type JournalEntry, parseJournalClock, parseJournalResult } from "../core/capabilities/journal";
import { isCategory } from "../core/capabilities/registry";
import { type Db, rawStatement } from "../db";
import type { WriteBatcher } from "./write-batcher";

type DurableQueries = Pick<
  RunStore,
  "load" | "journal" | "park" | "claim" | "holds" | "listResumable" | "listWaiting" | "finishedAmong"
>;

function parseJson<T>(text: string | null): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

const JOURNAL_STATES = new Set(["waiting", "started", "ok", "error"]);

export function createDurableRunQueries(db: Db, batch: WriteBatcher): DurableQueries {
  return {
    async load(id) {
      const row = await db.actionRun.findUnique({ where: { id } });
      if (!row) return null;
      const stored: StoredRun = {
        id: row.id,
        status: row.status as RunStatus,
        instanceId: row.instanceId,
        leaseToken: row.leaseToken,
        code: row.code,
        codeHash: row.codeHash,
        inputJson: row.input,
        context: parseJson<RunContext>(row.context),
        seed: row.seed,
        replays: row.replays,
        computeMs: row.computeMs,
        waitingFor: row.waitingFor,
        title: row.title,
        mcpRequestId: row.mcpRequestId,
        startedAt: row.startedAt.getTime(),
        envelope: parseJson<ObservationEnvelope>(row.envelope),
      };
      return stored;
    },
    async journal(id) {
      const rows = await db.gateDecisionRecord.findMany({
        where: { runId: id, seq: { not: null } },
        orderBy: { seq: "asc" },
      });
      return rows.map(
        (r): JournalEntry => ({
          seq: r.seq as number,
          capability: r.capability,
          category: isCategory(r.category) ? r.category : "execute",
          argsHash: r.argsHash,
          decision: r.decision as JournalEntry["decision"],
          reason: r.reason,
          approvalId: r.approvalId,
          state: r.state && JOURNAL_STATES.has(r.state) ? (r.state as JournalEntry["state"]) : null,
          result: parseJournalResult(r.result),
          clock: parseJournalClock(r.clock),
        }),
      );
    },
    async park(id, { approvalId, computeMs, at, fence }) {
      // Everything the run queued (its calls' journal rows) commits with, and before, the park.
      const count = await batch.write(() =>
        rawStatement(
          db,
          sql`UPDATE "ActionRun" SET "status" = 'waiting', "waitingFor" = ${approvalId},
          "parkedAt" = ${new Date(at)}, "computeMs" = "computeMs" + ${Math.round(computeMs)}
          WHERE "id" = ${id} AND "status" = 'running' AND "leaseToken" = ${fence}`,
        ),
      );
      return count === 1;
    },
    async claim(id, { instanceId, fromToken, from }) {
      await batch.flush();
      const { count } = await db.actionRun.updateMany({
        where: { id, leaseToken: fromToken, status: { in: from } },
        data: {
          status: "running",
          instanceId,
          leaseToken: { increment: 1 },
          replays: { increment: 1 },
          waitingFor: null,
          cancelRequestedAt: null,
        },
      });
      return count === 1 ? fromToken + 1 : null;
    },
    async holds(id, token) {
      const row = await db.actionRun.findUnique({
        where: { id },
        select: { leaseToken: true, status: true },
      });
      return (
        row !== null && row.leaseToken === token && ["running", "queued", "waiting"].includes(row.status)
      );
    },
    async listResumable(limit) {
      const rows = await db.$queryRaw<{ id: string; instanceId: string; leaseToken: number | bigint }[]>(
        sql`SELECT r."id", r."instanceId", r."leaseToken" FROM "ActionRun" r
        JOIN "Approval" a ON a."id" = r."waitingFor"
        WHERE r."status" = 'waiting' AND a."status" <> 'pending'
        ORDER BY r."parkedAt" LIMIT ${limit}`,
      );
      return rows.map((r) => ({ id: r.id, instanceId: r.instanceId, leaseToken: Number(r.leaseToken) }));
    },
    async finishedAmong(ids) {
      const out: { id: string; envelope: ObservationEnvelope }[] = [];
      for (let i = 0; i < ids.length; i += 500) {
        const rows = await db.actionRun.findMany({
          where: { id: { in: ids.slice(i, i + 500) }, status: { in: ["ok", "error", "interrupted"] } },
          select: { id: true, envelope: true },
        });
        for (const row of rows) {
          const envelope = parseJson<ObservationEnvelope>(row.envelope);
          if (envelope) out.push({ id: row.id, envelope });
        }
      }
      return out;
    },
    async listWaiting() {
      return db.actionRun.findMany({
        where: { status: "waiting" },
        select: { id: true, instanceId: true, leaseToken: true, waitingFor: true },
      });
    },
  };
}
