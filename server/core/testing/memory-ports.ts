/**
 * In-memory implementations of every engine port, for unit tests and benchmarks. Same contracts
 * as the Prisma-backed ones (compare-and-set included), none of the durability.
 */

import type { EnginePorts } from "../actions/engine";
import { isUnfinished, type RunStore, type StoredRun } from "../actions/ports";
import { type JournalEntry, parseJournalClock, parseJournalResult } from "../capabilities/journal";
import type { AssetStore, StoredAsset } from "../capabilities/ports";
import type {
  ApprovalRecord,
  ApprovalStore,
  Clock,
  DecisionRecord,
  DecisionSink,
  EngineEvent,
  EventPublisher,
  GrantStore,
  JournalSettle,
  RuleSource,
  SessionGrant,
} from "../gate/ports";
import type { PolicyRule } from "../gate/rules";

let counter = 0;
const nextId = (prefix: string) => `${prefix}_${(++counter).toString(36)}`;

export interface MemoryPorts extends EnginePorts {
  rules: RuleSource & { set(rules: PolicyRule[]): void; list: PolicyRule[] };
  grants: GrantStore & { all: SessionGrant[] };
  approvals: ApprovalStore & { all: Map<string, ApprovalRecord> };
  decisions: DecisionSink & { all: DecisionRecord[] };
  events: EventPublisher & { all: EngineEvent[]; subscribe(fn: (e: EngineEvent) => void): () => void };
  runs: RunStore & {
    all: Map<string, StoredRun & { cancelRequestedAt?: number }>;
    journals: Map<string, Map<number, JournalEntry>>;
  };
  assets: AssetStore & { all: (StoredAsset & { userId: string | null; bytes: Uint8Array })[] };
  clock: Clock;
}

/** `keepEvents: false` keeps no history (events, decisions, finished runs): for soak tests and benchmarks. */
export function createMemoryPorts(options: { clock?: Clock; keepEvents?: boolean } = {}): MemoryPorts {
  const clock = options.clock ?? { now: () => Date.now() };
  const keepEvents = options.keepEvents ?? true;
  const listeners = new Set<(e: EngineEvent) => void>();

  const rules = {
    list: [] as PolicyRule[],
    set(next: PolicyRule[]) {
      rules.list = next;
    },
    async listRules() {
      return rules.list;
    },
  };

  const grants = {
    all: [] as SessionGrant[],
    async findActive(sessionId: string, capability: string, versionHash: string) {
      return (
        grants.all.find(
          (g) => g.sessionId === sessionId && g.capability === capability && g.versionHash === versionHash,
        ) ?? null
      );
    },
    async create(grant: Omit<SessionGrant, "id" | "createdAt">) {
      const row = { ...grant, id: nextId("grant"), createdAt: clock.now() };
      grants.all.push(row);
      return row;
    },
  };

  const approvalRows = new Map<string, ApprovalRecord>();
  const approvals: MemoryPorts["approvals"] = {
    all: approvalRows,
    async create(input) {
      const row: ApprovalRecord = {
        ...input,
        id: nextId("appr"),
        status: "pending",
        scope: null,
        decidedById: null,
        decidedAt: null,
        consumedAt: null,
        createdAt: clock.now(),
        grantId: null,
        endReason: null,
        kind: input.kind ?? "call",
      };
      delete (row as { ttlMs?: number }).ttlMs;
      approvalRows.set(row.id, row);
      return { ...row };
    },
    async get(id) {
      const row = approvalRows.get(id);
      return row ? { ...row } : null;
    },
    async getMany(ids) {
      return ids.flatMap((id) => {
        const row = approvalRows.get(id);
        return row ? [{ ...row }] : [];
      });
    },
    async decide(id, change, now) {
      const row = approvalRows.get(id);
      if (row?.status !== "pending" || row.expiresAt <= now) return false;
      Object.assign(row, change, { decidedAt: now });
      return true;
    },
    async consume(id, argsHash, now) {
      const row = approvalRows.get(id);
      if (row?.status !== "allowed" || row.consumedAt !== null || row.argsHash !== argsHash) return false;
      row.consumedAt = now;
      return true;
    },
    async expire(id, reason) {
      const row = approvalRows.get(id);
      if (row?.status !== "pending") return false;
      row.status = "expired";
      row.endReason = reason ?? null;
      return true;
    },
    async abandon(id, reason) {
      const row = approvalRows.get(id);
      if (row?.status !== "allowed" || row.consumedAt !== null) return false;
      row.status = "abandoned";
      row.endReason = reason;
      return true;
    },
    async listPending(filter) {
      const by = filter?.expiresBy ?? Number.POSITIVE_INFINITY;
      const parkedAt = filter?.exceptParkedAt;
      const waitsParked = (r: ApprovalRecord) =>
        parkedAt !== undefined &&
        r.expiresAt > parkedAt &&
        r.runId !== null &&
        runRows.get(r.runId)?.status === "waiting";
      return [...approvalRows.values()]
        .filter((r) => r.status === "pending" && r.expiresAt <= by && !waitsParked(r))
        .map((r) => ({ ...r }));
    },
    async listOpenForRun(runId) {
      return [...approvalRows.values()]
        .filter(
          (r) =>
            r.runId === runId &&
            (r.status === "pending" || (r.status === "allowed" && r.consumedAt === null)),
        )
        .map((r) => ({ ...r }));
    },
    async listAllowedUnconsumed() {
      return [...approvalRows.values()]
        .filter((r) => r.status === "allowed" && r.consumedAt === null)
        .map((r) => ({ ...r }));
    },
  };

  const journals = new Map<string, Map<number, JournalEntry>>();
  const decisions = {
    all: [] as DecisionRecord[],
    async record(d: DecisionRecord) {
      // A journaled call's row is one row (an asked call's is written before and after the wait).
      const same = (o: DecisionRecord) => o.runId === d.runId && o.journal?.seq === d.journal?.seq;
      const at = d.journal && d.runId ? decisions.all.findIndex(same) : -1;
      if (keepEvents) {
        if (at >= 0) decisions.all[at] = d;
        else decisions.all.push(d);
      }
      if (!d.runId || !d.journal) return;
      const journal = journals.get(d.runId) ?? new Map<number, JournalEntry>();
      journals.set(d.runId, journal);
      journal.set(d.journal.seq, {
        seq: d.journal.seq,
        capability: d.capability,
        category: d.category,
        argsHash: d.argsHash,
        decision: d.decisionOverride ?? d.decision,
        reason: d.reason,
        approvalId: d.approvalId,
        state: d.journal.state,
        result: null,
        clock: parseJournalClock(d.journal.clock),
      });
    },
    async settle(runId: string, seq: number, change: JournalSettle) {
      const entry = journals.get(runId)?.get(seq);
      if (!entry) return;
      if (change.state) entry.state = change.state;
      if (change.result !== undefined) entry.result = parseJournalResult(change.result);
      if (change.approvalId) entry.approvalId = change.approvalId;
    },
  };

  const events = {
    all: [] as EngineEvent[],
    async publish(e: EngineEvent) {
      if (keepEvents) events.all.push(e);
      for (const fn of listeners) fn(e);
    },
    subscribe(fn: (e: EngineEvent) => void) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };

  const runRows: MemoryPorts["runs"]["all"] = new Map();
  const copy = (row: StoredRun): StoredRun => ({
    ...row,
    context: row.context ? structuredClone(row.context) : null,
  });
  const runs: MemoryPorts["runs"] = {
    all: runRows,
    journals,
    async flush() {},
    async create(run) {
      runRows.set(run.id, {
        id: run.id,
        status: "running",
        instanceId: run.instanceId,
        leaseToken: 0,
        code: run.code,
        codeHash: run.codeHash ?? "",
        inputJson: run.inputJson ?? null,
        context: run.context ? structuredClone(run.context) : null,
        seed: run.seed ?? "",
        replays: 0,
        computeMs: 0,
        waitingFor: null,
        title: run.title,
        mcpRequestId: run.mcpRequestId ?? null,
        startedAt: run.startedAt,
        envelope: null,
      });
    },
    async finish(id, result, fence) {
      const row = runRows.get(id);
      if (!row || !isUnfinished(row.status)) return false;
      if (fence !== undefined && row.leaseToken !== fence) return false;
      row.status = result.status;
      row.waitingFor = null;
      if (keepEvents) row.envelope = result.envelope;
      else {
        runRows.delete(id);
        journals.delete(id);
      }
      return true;
    },
    async setQueued(id, queued) {
      const row = runRows.get(id);
      if (row && (row.status === "running" || row.status === "queued"))
        row.status = queued ? "queued" : "running";
    },
    async get(id) {
      const row = runRows.get(id);
      return row ? { id: row.id, status: row.status, instanceId: row.instanceId } : null;
    },
    async getMany(ids) {
      return ids.flatMap((id) => {
        const row = runRows.get(id);
        return row ? [{ id: row.id, status: row.status, instanceId: row.instanceId }] : [];
      });
    },
    async listRunning() {
      return [...runRows.values()]
        .filter((r) => r.status === "running" || r.status === "queued")
        .map((r) => ({ id: r.id, instanceId: r.instanceId, leaseToken: r.leaseToken }));
    },
    async load(id) {
      const row = runRows.get(id);
      return row ? copy(row) : null;
    },
    async journal(id) {
      return [...(journals.get(id)?.values() ?? [])]
        .sort((a, b) => a.seq - b.seq)
        .map((e) => ({ ...e, clock: [...e.clock] }));
    },
    async park(id, { approvalId, computeMs, fence }) {
      const row = runRows.get(id);
      if (row?.status !== "running" || row.leaseToken !== fence) return false;
      row.status = "waiting";
      row.waitingFor = approvalId;
      row.computeMs += computeMs;
      return true;
    },
    async claim(id, { instanceId, fromToken, from }) {
      const row = runRows.get(id);
      if (!row || row.leaseToken !== fromToken || !from.includes(row.status)) return null;
      row.status = "running";
      row.instanceId = instanceId;
      row.leaseToken += 1;
      row.replays += 1;
      row.waitingFor = null;
      return row.leaseToken;
    },
    async holds(id, token) {
      const row = runRows.get(id);
      return row !== undefined && row.leaseToken === token && isUnfinished(row.status);
    },
    async listResumable(limit) {
      return [...runRows.values()]
        .filter((r) => {
          if (r.status !== "waiting" || !r.waitingFor) return false;
          return approvalRows.get(r.waitingFor)?.status !== "pending";
        })
        .slice(0, limit)
        .map((r) => ({ id: r.id, instanceId: r.instanceId, leaseToken: r.leaseToken }));
    },
    async finishedAmong(ids) {
      return ids.flatMap((id) => {
        const row = runRows.get(id);
        return row && !isUnfinished(row.status) && row.envelope ? [{ id, envelope: row.envelope }] : [];
      });
    },
    async listWaiting() {
      return [...runRows.values()]
        .filter((r) => r.status === "waiting")
        .map((r) => ({
          id: r.id,
          instanceId: r.instanceId,
          leaseToken: r.leaseToken,
          waitingFor: r.waitingFor,
        }));
    },
    async markInterrupted(id, message, _at, fence) {
      const row = runRows.get(id);
      if (row?.status !== "running" && row?.status !== "queued") return false;
      if (fence !== undefined && row.leaseToken !== fence) return false;
      row.status = "interrupted";
      const calls = decisions.all
        .filter((d) => d.runId === id)
        .map((d) => ({
          capability: d.capability,
          category: d.category,
          decision: d.decision,
          ms: d.ms,
          outcome: d.decision === "allow" ? ("unknown" as const) : ("not_run" as const),
        }));
      row.envelope = {
        ok: false,
        error: { kind: "interrupted", message },
        logs: [],
        calls,
        images: [],
        durationMs: 0,
      };
      return true;
    },
    async requestCancel(id, at) {
      const row = runRows.get(id);
      if (row?.status !== "running") return false;
      row.cancelRequestedAt ??= at;
      return true;
    },
    async cancelRequested(ids) {
      return ids.filter((id) => {
        const row = runRows.get(id);
        return row?.status === "running" && row.cancelRequestedAt !== undefined;
      });
    },
  };

  const assets: MemoryPorts["assets"] = {
    all: [],
    async save(a) {
      const row = {
        id: nextId("asset"),
        mime: a.mime,
        width: a.width,
        height: a.height,
        createdAt: clock.now(),
        userId: a.userId,
        bytes: a.bytes,
      };
      assets.all.push(row);
      return { id: row.id };
    },
    async list({ userId, limit }) {
      return assets.all
        .filter((a) => a.userId === userId)
        .slice(-limit)
        .reverse()
        .map(({ id, mime, width, height, createdAt }) => ({ id, mime, width, height, createdAt }));
    },
  };

  return { rules, grants, approvals, decisions, events, runs, assets, clock };
}
