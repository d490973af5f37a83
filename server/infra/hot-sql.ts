/**
 * The statements every action makes (its run row, its decision rows, its audit entries and its
 * live events), as parameterized SQL through the Prisma client instead of its query builder: they
 * join the same batch transactions, and write the same values Prisma would (DateTime parameters
 * go through the driver adapter as for a model query), at about half the CPU per statement
 * (bench/served.bench.ts). Identifiers are quoted, so one text serves SQLite and PostgreSQL;
 * `Prisma.sql` numbers the placeholders for each. The schema is prisma/schema.prisma; the tests
 * read these rows back through the models.
 *
 * A batch whose first statement is a model query goes through Prisma's batch plan cache, keyed
 * by the batch's text with raw parameters inline: every such commit would be a new entry (up to
 * 1,000, holding envelopes and code). Keeping the action path's statements all raw avoids it.
 */
import { randomUUID } from "node:crypto";
import { join, sqltag as sql } from "@prisma/client/runtime/client";
import { type Db, rawStatement, type Statement } from "../db";
import type { AuditEntryRow } from "./audit-log";

export interface RunRow {
  id: string;
  sessionId: string;
  surface: string;
  userId: string | null;
  apiKeyId: string | null;
  title: string;
  code: string;
  mode: string;
  instanceId: string;
  startedAt: Date;
  mcpRequestId: string | null;
  /** A run whose row is written only once it has finished carries its end here. */
  end?: RunEnd;
}

export interface RunEnd {
  status: string;
  errorKind: string | null;
  envelope: string;
  durationMs: number;
  finishedAt: Date;
}

export function insertRun(db: Db, r: RunRow): Statement {
  const end = r.end;
  return rawStatement(
    db,
    sql`INSERT INTO "ActionRun" ("id", "sessionId", "surface", "userId", "apiKeyId",
    "title", "code", "mode", "status", "errorKind", "envelope", "instanceId", "startedAt", "finishedAt",
    "durationMs", "mcpRequestId") VALUES (${r.id}, ${r.sessionId}, ${r.surface}, ${r.userId}, ${r.apiKeyId},
    ${r.title}, ${r.code}, ${r.mode}, ${end?.status ?? "running"}, ${end?.errorKind ?? null},
    ${end?.envelope ?? null}, ${r.instanceId}, ${r.startedAt}, ${end?.finishedAt ?? null},
    ${end?.durationMs ?? null}, ${r.mcpRequestId})`,
  );
}

export function finishRun(db: Db, id: string, end: RunEnd): Statement {
  return rawStatement(
    db,
    sql`UPDATE "ActionRun" SET "status" = ${end.status}, "errorKind" = ${end.errorKind},
    "envelope" = ${end.envelope}, "durationMs" = ${end.durationMs}, "finishedAt" = ${end.finishedAt}
    WHERE "id" = ${id}`,
  );
}

/** queued <-> running, only while the run has not ended. */
export function setRunQueued(db: Db, id: string, queued: boolean): Statement {
  return rawStatement(
    db,
    sql`UPDATE "ActionRun" SET "status" = ${queued ? "queued" : "running"}
    WHERE "id" = ${id} AND "status" IN ('running', 'queued')`,
  );
}

export interface EventRow {
  type: string;
  payload: string;
}

export function insertEvents(db: Db, rows: EventRow[]): Statement {
  const at = new Date();
  return rawStatement(
    db,
    sql`INSERT INTO "Event" ("type", "payload", "createdAt") VALUES ${join(
      rows.map((e) => sql`(${e.type}, ${e.payload}, ${at})`),
    )}`,
  );
}

export interface DecisionRow {
  runId: string | null;
  sessionId: string;
  capability: string;
  category: string;
  decision: string;
  reason: string;
  ruleId: string | null;
  approvalId: string | null;
  argsHash: string;
  args?: string | null;
  ms: number;
  createdAt: Date;
}

export function insertDecisions(db: Db, rows: DecisionRow[]): Statement {
  return rawStatement(
    db,
    sql`INSERT INTO "GateDecisionRecord" ("id", "runId", "sessionId", "capability", "category", "decision",
      "reason", "ruleId", "approvalId", "argsHash", "args", "ms", "createdAt") VALUES ${join(
        rows.map(
          (d) =>
            sql`(${randomUUID()}, ${d.runId}, ${d.sessionId}, ${d.capability}, ${d.category}, ${d.decision},
            ${d.reason}, ${d.ruleId}, ${d.approvalId}, ${d.argsHash}, ${d.args ?? null}, ${d.ms}, ${d.createdAt})`,
        ),
      )}`,
  );
}

/** An audit entry as the audit log chained it; the id is made here. */
export type AuditRow = Omit<AuditEntryRow, "id">;

export function insertAuditEntries(db: Db, rows: AuditRow[]): Statement {
  return rawStatement(
    db,
    sql`INSERT INTO "AuditEntry" ("id", "seq", "at", "actorType", "actorId", "actorName", "action", "target",
      "before", "after", "detail", "prevHash", "hash") VALUES ${join(
        rows.map(
          (a) =>
            sql`(${randomUUID()}, ${a.seq}, ${a.at}, ${a.actorType}, ${a.actorId}, ${a.actorName}, ${a.action},
            ${a.target}, ${a.before}, ${a.after}, ${a.detail}, ${a.prevHash}, ${a.hash})`,
        ),
      )}`,
  );
}
