/**
 * Human approvals: request (a pending row + live event), wait (poll the store every ~200 ms and
 * wake early on a local decision, so a decision taken on another instance is seen), decide
 * (compare-and-set), consume (single use, bound to the argument hash), expire, and recovery after
 * a restart. All state is in the ApprovalStore; memory only holds wake-up callbacks. Every row
 * ends in a terminal state: a request whose run is gone is never `allowed` (deciding it answers
 * CONFLICT), and an allowed request whose run died before using it becomes `abandoned`.
 */

import type { ArgsSnapshot } from "../capabilities/snapshot";
import type { Category, JsonObject, Session } from "../capabilities/types";
import { AppError } from "../errors";
import { approvalSummary, decidedEvent, decidedEventOfRow, expiredEvent } from "./approval-events";
import {
  ABANDONED_REASON,
  type RecoveryOptions,
  type RunLiveness,
  recoverApprovals,
} from "./approval-recovery";
import { createApprovalWaiters, RUN_GONE_REASON } from "./approval-waiters";
import type {
  ApprovalKind,
  ApprovalRecord,
  ApprovalStore,
  Clock,
  EngineEvent,
  EventPublisher,
  GrantStore,
} from "./ports";

/** The longest an approval may wait: 7 days. */
export const MAX_APPROVAL_TTL_MS = 7 * 24 * 60 * 60_000;

const DEFAULT_APPROVAL_TTL_MS = 5 * 60_000;
const DEFAULT_APPROVAL_POLL_MS = 200;

export { ParkedWait } from "./approval-waiters";
export { ABANDONED_REASON, RUN_GONE_REASON };

export const APPROVAL_ANSWERS = ["once", "session", "deny"] as const;
export type ApprovalAnswer = (typeof APPROVAL_ANSWERS)[number];

export interface Decider {
  /** Console user who answered; null for an answer not tied to a user. */
  userId: string | null;
  /** Set when the answer came through an API key (e.g. MCP elicitation): it may not answer its own requests. */
  apiKeyId?: string | null;
  /** Shown in the live feed: "alice". */
  label: string;
}

export interface ApprovalRequestInput {
  runId: string | null;
  session: Session;
  capability: {
    name: string;
    category: Category;
    versionHash: string;
    userMessage?: (args: JsonObject) => string;
  };
  snapshot: ArgsSnapshot;
  sessionGrantable: boolean;
  /** `uncertain`: the call may already have happened; allowing runs it again. Default `call`. */
  kind?: ApprovalKind;
  /** How long the request may wait (a rule's override); default the service's TTL. */
  ttlMs?: number;
}

export interface ApprovalService {
  request(input: ApprovalRequestInput, local?: (event: EngineEvent) => void): Promise<ApprovalRecord>;
  /**
   * Resolves with the approval once it is no longer pending (or expired by the wait itself).
   * `detach` ends the wait without touching the request (a parked run): rejects with ParkedWait.
   */
  wait(
    id: string,
    signal: AbortSignal,
    local?: (event: EngineEvent) => void,
    detach?: AbortSignal,
  ): Promise<ApprovalRecord>;
  get(id: string): Promise<ApprovalRecord | null>;
  /**
   * Open call requests of a run, pending or allowed and unconsumed (a replay adopts one its
   * earlier attempt made: the answer may have come while no instance held the run).
   */
  openForRun(runId: string): Promise<ApprovalRecord[]>;
  decide(input: { approvalId: string; answer: ApprovalAnswer; decidedBy: Decider }): Promise<ApprovalRecord>;
  consume(id: string, argsHash: string): Promise<boolean>;
  /** Marks pending approvals past their expiry as expired; returns how many. */
  expireDue(): Promise<number>;
  /**
   * Expire pending approvals whose run no longer exists or no longer runs (after a restart, and
   * periodically). Approvals a run on this instance waits for are never touched. Direct calls
   * (no run) are expired only with `includeDirectCalls` (at startup: their waiter died with the
   * old process).
   */
  recover(liveRuns: RunLiveness, options?: RecoveryOptions): Promise<number>;
  /** Wake waiters of `id` now (call it when another instance's decision event arrives). */
  wake(id: string): void;
  /** Expire the pending approvals of one run at once (the run was cancelled); returns how many. */
  expireForRun(runId: string, reason: string): Promise<number>;
}

export interface ApprovalServiceDeps {
  store: ApprovalStore;
  grants: GrantStore;
  events: EventPublisher;
  clock: Clock;
  ttlMs?: number;
  pollMs?: number;
  /**
   * Whether the run that asked still runs on a live instance, or will again (parked, or left by a
   * dead instance for recovery to replay). `decide` refuses (CONFLICT) to answer for a run that is
   * gone, so nobody is told "allowed" for a call that will never run.
   */
  isRunAlive?: (runId: string) => Promise<boolean>;
  /** Told after a decision this instance took (a parked run resumes at once). */
  onDecided?: (record: ApprovalRecord) => void;
}

/** "approval x is already denied" — or, for a row closed by recovery or a cancel, why it ended. */
function endedMessage(record: ApprovalRecord): string {
  if (record.endReason && (record.status === "expired" || record.status === "abandoned")) {
    return `approval ${record.id} is ${record.status}: ${record.endReason}`;
  }
  return `approval ${record.id} is already ${record.status}`;
}

/** Why a compare-and-set decision lost: the row was answered meanwhile, or its time ran out. */
async function lostDecisionError(store: ApprovalStore, approvalId: string): Promise<AppError> {
  const latest = await store.get(approvalId);
  return new AppError(
    "CONFLICT",
    latest
      ? endedMessage({ ...latest, status: latest.status === "pending" ? "expired" : latest.status })
      : `approval ${approvalId} is gone`,
  );
}

/**
 * A new session grant also answers the requests of that session already waiting that it covers
 * (same capability and version, not forced by an ask rule), each recorded as decided by it.
 */
async function releaseCovered(
  deps: Pick<ApprovalServiceDeps, "store" | "clock" | "events">,
  wake: (id: string) => void,
  source: ApprovalRecord,
  grantId: string,
  decidedBy: Decider,
): Promise<void> {
  const { store, clock, events } = deps;
  for (const sibling of await store.listPending()) {
    if (
      sibling.id === source.id ||
      sibling.sessionId !== source.sessionId ||
      sibling.capability !== source.capability ||
      sibling.versionHash !== source.versionHash ||
      !sibling.sessionGrantable
    )
      continue;
    const now = clock.now();
    const change = { status: "allowed", scope: "session", decidedById: decidedBy.userId, grantId } as const;
    if (!(await store.decide(sibling.id, change, now))) continue; // expired or answered meanwhile
    await events.publish(
      decidedEvent(sibling, {
        status: "allowed",
        scope: "session",
        decidedBy: decidedBy.label,
        grantId,
        at: now,
      }),
    );
    wake(sibling.id);
  }
}

export function createApprovalService(deps: ApprovalServiceDeps): ApprovalService {
  const ttlMs = deps.ttlMs ?? DEFAULT_APPROVAL_TTL_MS;
  const { store, clock, events } = deps;

  async function publishExpired(
    record: ApprovalRecord,
    local?: (event: EngineEvent) => void,
    reason?: string,
  ): Promise<void> {
    const event = expiredEvent(record, clock.now(), reason);
    local?.(event);
    await events.publish(event);
  }

  const waiters = createApprovalWaiters({
    store,
    clock,
    pollMs: deps.pollMs ?? DEFAULT_APPROVAL_POLL_MS,
    publishExpired,
    decidedEvent: (record) => decidedEventOfRow(record, clock.now()),
  });
  const { wake } = waiters;

  /** Expires the pending ones of `records`; returns how many it closed. */
  async function expirePending(records: ApprovalRecord[], reason?: string): Promise<number> {
    let count = 0;
    for (const record of records) {
      if (record.status !== "pending") continue;
      if (await store.expire(record.id, reason)) {
        count += 1;
        await publishExpired(record, undefined, reason);
        wake(record.id);
      }
    }
    return count;
  }

  /** Refuses to answer for a run that is gone, closing its row so nobody is told "allowed". */
  async function refuseIfRunGone(record: ApprovalRecord): Promise<void> {
    if (record.runId === null || !deps.isRunAlive || (await deps.isRunAlive(record.runId))) return;
    if (await store.expire(record.id, RUN_GONE_REASON))
      await publishExpired(record, undefined, RUN_GONE_REASON);
    throw new AppError("CONFLICT", `approval ${record.id}: ${RUN_GONE_REASON}`);
  }

  return {
    wake,
    wait: waiters.wait,
    get: (id) => store.get(id),
    async openForRun(runId) {
      return (await store.listOpenForRun(runId)).filter((r) => r.kind === "call");
    },

    async request(input, local) {
      const now = clock.now();
      const { session, capability, snapshot } = input;
      const record = await store.create({
        runId: input.runId,
        sessionId: session.id,
        capability: capability.name,
        category: capability.category,
        versionHash: capability.versionHash,
        argsSnapshot: snapshot.json,
        argsHash: snapshot.hash,
        requestedBy: session.actorLabel,
        requesterUserId: session.userId,
        apiKeyId: session.apiKeyId ?? null,
        expiresAt: now + Math.min(input.ttlMs ?? ttlMs, MAX_APPROVAL_TTL_MS),
        sessionGrantable: input.sessionGrantable,
        ...(input.kind ? { kind: input.kind } : {}),
      });
      const summary = approvalSummary(record, snapshot, capability.userMessage);
      const event: EngineEvent = { type: "approval.requested", approval: summary, at: now };
      local?.(event);
      await events.publish(event);
      return record;
    },

    async decide({ approvalId, answer, decidedBy }) {
      const record = await store.get(approvalId);
      if (!record) throw new AppError("NOT_FOUND", `approval ${approvalId} does not exist`);
      if (decidedBy.apiKeyId && record.apiKeyId && decidedBy.apiKeyId === record.apiKeyId) {
        throw new AppError("FORBIDDEN", "an API key cannot answer its own approval requests");
      }
      if (record.status !== "pending") throw new AppError("CONFLICT", endedMessage(record));
      if (answer === "session" && !record.sessionGrantable) {
        throw new AppError(
          "BAD_INPUT",
          `approval ${approvalId} cannot be allowed for the session (${record.kind === "uncertain" ? "the call may already have happened" : "a rule asks for every call"}): answer once or deny`,
        );
      }
      await refuseIfRunGone(record);
      const now = clock.now();
      const scope = answer === "deny" ? null : answer;
      const status = answer === "deny" ? "denied" : "allowed";
      if (!(await store.decide(approvalId, { status, scope, decidedById: decidedBy.userId }, now))) {
        throw await lostDecisionError(store, approvalId);
      }
      const grant =
        answer === "session"
          ? await deps.grants.create({
              sessionId: record.sessionId,
              capability: record.capability,
              versionHash: record.versionHash,
              approvalId: record.id,
              grantedById: decidedBy.userId,
            })
          : null;
      await events.publish(decidedEvent(record, { status, scope, decidedBy: decidedBy.label, at: now }));
      wake(approvalId);
      if (grant) await releaseCovered(deps, wake, record, grant.id, decidedBy);
      const updated = await store.get(approvalId);
      if (!updated) throw new AppError("NOT_FOUND", `approval ${approvalId} does not exist`);
      deps.onDecided?.(updated);
      return updated;
    },

    consume(id, argsHash) {
      return store.consume(id, argsHash, clock.now());
    },

    async expireDue() {
      const now = clock.now();
      return expirePending(
        (await store.listPending({ expiresBy: now })).filter((record) => record.expiresAt <= now),
      );
    },

    recover(liveRuns, options = {}) {
      return recoverApprovals({ store, events, clock, isWaited: waiters.has }, liveRuns, options);
    },

    // One run's rows (indexed), not every pending row: a burst of cancels stays linear.
    async expireForRun(runId, reason) {
      return expirePending(await store.listOpenForRun(runId), reason);
    },
  };
}
