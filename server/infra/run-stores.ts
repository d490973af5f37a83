/**
 * Action runs, gate decisions, image assets and policy rules in the database, and the live feed
 * through the Event outbox (server/infra/events.ts).
 */
import type { ObservationEnvelope } from "../core/actions/envelope";
import type { RunState, RunStatus, RunStore } from "../core/actions/ports";
import type { CallRecord } from "../core/capabilities/invoke";
import type { AssetStore } from "../core/capabilities/ports";
import { isCategory } from "../core/capabilities/registry";
import { AppError } from "../core/errors";
import type { DecisionSink, EventPublisher, RuleSource } from "../core/gate/ports";
import { CONDITION_OPS, type PolicyRule, RULE_EFFECTS, type RuleCondition } from "../core/gate/rules";
import type { Db } from "../db";
import { auditLogFor } from "./audit-log";
import {
  type DecisionRow,
  type EventRow,
  finishRun,
  insertDecisions,
  insertEvents,
  insertRun,
  type RunEnd,
  type RunRow,
  setRunQueued,
  settleJournal,
} from "./hot-sql";
import { parseRuleBudget } from "./policy-trial-stores";
import { createDurableRunQueries } from "./run-journal";
import type { WriteBatcher } from "./write-batcher";

export function createPrismaRunStore(db: Db, batch: WriteBatcher): RunStore {
  /**
   * Run rows queued and not yet built into a commit. A run that finishes before its row is
   * written (most do: the row waits for a group commit) is written once, finished.
   */
  const unwritten = new Map<string, { row: RunRow; written: Promise<unknown> }>();
  return {
    async create(run) {
      const row: RunRow = {
        id: run.id,
        sessionId: run.sessionId,
        surface: run.surface,
        userId: run.userId,
        apiKeyId: run.apiKeyId,
        title: run.title,
        code: run.code,
        mode: run.mode,
        instanceId: run.instanceId,
        startedAt: new Date(run.startedAt),
        mcpRequestId: run.mcpRequestId ?? null,
        codeHash: run.codeHash ?? "",
        input: run.inputJson ?? null,
        context: run.context ? JSON.stringify(run.context) : null,
        seed: run.seed ?? "",
      };
      const written = batch.defer(() => {
        unwritten.delete(run.id);
        return insertRun(db, row);
      });
      unwritten.set(run.id, { row, written });
      try {
        await written;
      } finally {
        unwritten.delete(run.id);
      }
    },
    flush: (options) => batch.flush(options),
    // A run's end records what already happened: its commit does not wait for the disk (a power
    // cut within the lag leaves the run unfinished, and recovery replays it from its journal).
    async finish(id, result, fence) {
      const end: RunEnd = {
        status: result.status,
        errorKind: result.errorKind,
        envelope: JSON.stringify(result.envelope),
        durationMs: Math.round(result.durationMs),
        finishedAt: new Date(result.finishedAt),
      };
      const queued = unwritten.get(id);
      if (queued) {
        // Not written yet, so nobody else can have taken it over.
        queued.row.end = end;
        await Promise.all([queued.written, batch.flush({ disk: false })]);
        return true;
      }
      return (await batch.write(() => finishRun(db, id, end, fence), { disk: false })) === 1;
    },
    unwritten: (id) => unwritten.has(id),
    async setQueued(id, queued) {
      await batch.defer(() => setRunQueued(db, id, queued));
    },
    async get(id) {
      const row = await db.actionRun.findUnique({
        where: { id },
        select: { id: true, status: true, instanceId: true },
      });
      return row ? { id: row.id, status: row.status as RunStatus, instanceId: row.instanceId } : null;
    },
    async getMany(ids) {
      const out: RunState[] = [];
      for (let i = 0; i < ids.length; i += 500) {
        const rows = await db.actionRun.findMany({
          where: { id: { in: ids.slice(i, i + 500) } },
          select: { id: true, status: true, instanceId: true },
        });
        for (const row of rows)
          out.push({ id: row.id, status: row.status as RunStatus, instanceId: row.instanceId });
      }
      return out;
    },
    async listRunning() {
      return db.actionRun.findMany({
        where: { status: { in: ["running", "queued"] } },
        select: { id: true, instanceId: true, leaseToken: true },
      });
    },
    ...createDurableRunQueries(db, batch),
    async markInterrupted(id, message, finishedAt, fence) {
      const row = await db.actionRun.findUnique({ where: { id }, select: { startedAt: true } });
      const envelope: ObservationEnvelope = {
        ok: false,
        error: { kind: "interrupted", message },
        logs: [],
        calls: await callsFromAudit(db, id),
        images: [],
        durationMs: row ? Math.max(0, finishedAt - row.startedAt.getTime()) : 0,
      };
      const { count } = await db.actionRun.updateMany({
        // With `fence`: only while nobody took the run over since it was seen.
        where: {
          id,
          status: { in: ["running", "queued"] },
          ...(fence === undefined ? {} : { leaseToken: fence }),
        },
        data: {
          status: "interrupted",
          errorKind: "interrupted",
          envelope: JSON.stringify(envelope),
          finishedAt: new Date(finishedAt),
          durationMs: Math.round(envelope.durationMs),
        },
      });
      return count === 1;
    },
    async requestCancel(id, at) {
      const { count } = await db.actionRun.updateMany({
        where: { id, status: { in: ["running", "queued"] } },
        data: { cancelRequestedAt: new Date(at) },
      });
      return count === 1;
    },
    async cancelRequested(ids) {
      if (ids.length === 0) return [];
      const rows = await db.actionRun.findMany({
        where: { id: { in: ids }, status: { in: ["running", "queued"] }, cancelRequestedAt: { not: null } },
        select: { id: true },
      });
      return rows.map((r) => r.id);
    },
  };
}

/**
 * The calls of a run as the audit saw them: each gate decision row, and for the calls let through
 * whether a `call.finished` event followed (the impl returned or threw). A call let through with
 * no such event was in flight when the process died: its side effect may or may not have happened.
 */
async function callsFromAudit(db: Db, runId: string): Promise<CallRecord[]> {
  const [decisions, finished] = await Promise.all([
    db.gateDecisionRecord.findMany({
      where: { runId },
      orderBy: { createdAt: "asc" },
      select: { capability: true, category: true, decision: true, reason: true, ms: true },
    }),
    db.event.findMany({
      where: { type: "call.finished", payload: { contains: `"runId":${JSON.stringify(runId)}` } },
      orderBy: { seq: "asc" },
      select: { payload: true },
    }),
  ]);
  // Finished calls in order, per capability: the n-th allowed call of a capability pairs with the n-th finish.
  const finishes = new Map<string, boolean[]>();
  for (const row of finished) {
    const p = JSON.parse(row.payload) as { capability?: string; ok?: boolean };
    if (typeof p.capability !== "string") continue;
    finishes.set(p.capability, [...(finishes.get(p.capability) ?? []), p.ok === true]);
  }
  return decisions.map((d) => {
    const line: CallRecord = {
      capability: d.capability,
      category: isCategory(d.category) ? d.category : null,
      decision: d.decision as CallRecord["decision"],
      ms: d.ms,
      outcome: "not_run",
    };
    if (d.reason) line.reason = d.reason;
    if (d.decision === "allow") {
      const ok = finishes.get(d.capability)?.shift();
      line.outcome = ok === undefined ? "unknown" : ok ? "completed" : "failed";
    }
    return line;
  });
}

/**
 * Rows of one table queued for the same commit become one multi-row insert, built when the
 * batch runs (rows added until then join it), in the order they were added. An urgent row has
 * the batcher commit at once. Resolves once the row is written.
 */
function groupedInsert<Row>(
  batch: WriteBatcher,
  insert: (rows: Row[]) => PromiseLike<unknown>,
): (row: Row, urgent: boolean) => Promise<void> {
  let group: Row[] | undefined;
  let written: Promise<unknown> = Promise.resolve();
  return async (row, urgent) => {
    if (!group) {
      const rows: Row[] = [];
      group = rows;
      written = batch.defer(
        () => {
          if (group === rows) group = undefined;
          return insert(rows);
        },
        // Rows of runs whose own row queued after this insert join it: it goes last.
        { last: true },
      );
    }
    group.push(row);
    if (urgent) void batch.flush();
    await written;
  };
}

export function createPrismaDecisionSink(db: Db, batch: WriteBatcher): DecisionSink {
  const audit = auditLogFor(db, { batch });
  /** Journal rows queued and not yet built into a commit, by run and place: a settle joins them. */
  const queued = new Map<string, DecisionRow>();
  const keyOf = (runId: string, seq: number) => `${runId}#${seq}`;
  const insert = groupedInsert(batch, (rows: DecisionRow[]) => {
    const last = new Map<string, DecisionRow>();
    rows.forEach((row, i) => {
      const key = row.runId !== null && row.seq !== null ? keyOf(row.runId, row.seq) : `#${i}`;
      queued.delete(key);
      last.delete(key);
      last.set(key, row);
    });
    return insertDecisions(db, [...last.values()]);
  });
  return {
    async settle(runId, seq, change, options) {
      const row = queued.get(keyOf(runId, seq));
      if (row) {
        if (change.state) row.state = change.state;
        if (change.result !== undefined) row.result = change.result;
        if (change.approvalId) row.approvalId = change.approvalId;
        if (options?.durable) await batch.flush();
        return;
      }
      const op = () => settleJournal(db, runId, seq, change);
      await (options?.durable ? batch.write(op) : batch.defer(op, { last: true }));
    },
    async record(d, options) {
      const durable = options?.durable === true;
      const row: DecisionRow = {
        runId: d.runId,
        sessionId: d.sessionId,
        capability: d.capability,
        category: d.category,
        decision: d.decisionOverride ?? d.decision,
        reason: d.reason,
        ruleId: d.ruleId,
        approvalId: d.approvalId,
        argsHash: d.argsHash,
        ms: Math.round(d.ms),
        createdAt: new Date(d.at),
        seq: d.journal?.seq ?? null,
        state: d.journal?.state ?? null,
        args: d.journal?.args ?? d.args ?? null,
        result: null,
        clock: d.journal?.clock ?? null,
      };
      if (d.runId !== null && row.seq !== null) queued.set(keyOf(d.runId, row.seq), row);
      // The wait itself is not a decision; the approval request is audited where it is made.
      if (d.decisionOverride === "ask") {
        await insert(row, true);
        return;
      }
      const entry = audit.append(
        {
          actor: { type: "system", id: d.sessionId, name: "gate" },
          action: `gate.${d.decision}`,
          target: d.capability,
          at: new Date(d.at),
          detail: {
            runId: d.runId,
            sessionId: d.sessionId,
            category: d.category,
            reason: d.reason,
            ruleId: d.ruleId,
            approvalId: d.approvalId,
            argsHash: d.argsHash,
          },
        },
        { lazy: !durable },
      );
      await insert(row, durable);
      await entry;
    },
  };
}

export function createPrismaAssetStore(db: Db, batch: WriteBatcher): AssetStore {
  return {
    async save(asset) {
      // Through the batcher: the run's row (which the asset refers to) may still be queued there.
      return batch.write(() =>
        db.imageAsset.create({
          data: {
            userId: asset.userId,
            runId: asset.runId,
            mime: asset.mime,
            width: asset.width,
            height: asset.height,
            bytes: Buffer.from(asset.bytes),
            sha256: asset.sha256,
          },
          select: { id: true },
        }),
      );
    },
    async list({ userId, limit }) {
      const rows = await db.imageAsset.findMany({
        where: { userId },
        orderBy: { createdAt: "desc" },
        take: limit,
        select: { id: true, mime: true, width: true, height: true, createdAt: true },
      });
      return rows.map((r) => ({ ...r, createdAt: r.createdAt.getTime() }));
    },
  };
}

/**
 * Engine events into the Event outbox (the same rows server/infra/events.ts writes; every
 * instance's tail picks them up), batched with the run's other writes: the events queued for one
 * commit are one multi-row insert, in the order they were published. A lazy event waits for the
 * batcher's next commit; any other commits at once. The payload is the event without its type.
 */
export function createOutboxPublisher(db: Db, batch: WriteBatcher): EventPublisher {
  const insert = groupedInsert(batch, (rows: EventRow[]) => insertEvents(db, rows));
  return {
    async publish(event, options) {
      const { type, ...payload } = event;
      await insert({ type, payload: JSON.stringify(payload) }, !options?.lazy);
    },
  };
}

function parseConditions(text: string, ruleId: string): RuleCondition[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const valid =
    Array.isArray(parsed) &&
    parsed.every(
      (c) =>
        c &&
        typeof c === "object" &&
        typeof c.path === "string" &&
        (CONDITION_OPS as readonly string[]).includes(c.op),
    );
  // Fail closed: a rule the gate cannot read must not be skipped (it may be a deny rule).
  if (!valid) throw new AppError("CONFIG_INVALID", `policy rule ${ruleId} has unreadable conditions`);
  return parsed as RuleCondition[];
}

/** Enabled rules, re-read at most every `cacheMs` (a new deny rule applies within that time). */
export function createPrismaRuleSource(db: Db, cacheMs = 200): RuleSource & { invalidate(): void } {
  let cached: { at: number; rules: Promise<PolicyRule[]> } | undefined;
  async function load(): Promise<PolicyRule[]> {
    const rows = await db.policyRule.findMany({
      where: { enabled: true },
      orderBy: { createdAt: "asc" },
      select: {
        id: true,
        effect: true,
        pattern: true,
        conditions: true,
        versionHash: true,
        description: true,
        approvalTtlMinutes: true,
        shadow: true,
        budget: true,
      },
    });
    return rows.map((row) => {
      if (!(RULE_EFFECTS as readonly string[]).includes(row.effect)) {
        throw new AppError("CONFIG_INVALID", `policy rule ${row.id} has an unknown effect "${row.effect}"`);
      }
      return {
        id: row.id,
        effect: row.effect as PolicyRule["effect"],
        pattern: row.pattern,
        conditions: parseConditions(row.conditions, row.id),
        versionHash: row.versionHash,
        description: row.description,
        approvalTtlMinutes: row.approvalTtlMinutes,
        shadow: row.shadow,
        budget: parseRuleBudget(row.budget, row.id),
      };
    });
  }
  return {
    listRules() {
      const now = Date.now();
      if (!cached || now - cached.at > cacheMs) {
        const rules = load();
        cached = { at: now, rules };
        rules.catch(() => {
          if (cached?.rules === rules) cached = undefined;
        });
      }
      return cached.rules;
    },
    invalidate() {
      cached = undefined;
    },
  };
}
