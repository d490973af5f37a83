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
import type {
  ApprovalRecord,
  ApprovalScope,
  ApprovalStore,
  ApprovalSummary,
  Clock,
  EngineEvent,
  EventPublisher,
  GrantStore,
} from "./ports";

export const DEFAULT_APPROVAL_TTL_MS = 5 * 60_000;
export const DEFAULT_APPROVAL_POLL_MS = 200;
/** What a person who answers too late is told (the console and tRPC show it as is). */
export const RUN_GONE_REASON = "the action ended before it could be approved";
export const ABANDONED_REASON =
  "the server process running the action stopped before the approved call ran; nothing was executed";

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
}

export interface ApprovalService {
  request(input: ApprovalRequestInput, local?: (event: EngineEvent) => void): Promise<ApprovalRecord>;
  /** Resolves with the approval once it is no longer pending (or expired by the wait itself). */
  wait(id: string, signal: AbortSignal, local?: (event: EngineEvent) => void): Promise<ApprovalRecord>;
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
  recover(
    isRunAlive: (runId: string) => Promise<boolean>,
    options?: { includeDirectCalls?: boolean },
  ): Promise<number>;
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
   * Whether the run that asked still runs on a live instance. `decide` refuses (CONFLICT) to
   * answer for a run that is gone, so nobody is told "allowed" for a call that will never run.
   */
  isRunAlive?: (runId: string) => Promise<boolean>;
}

const DIRECT_CALL_STALE_MS = 60_000;

/** "approval x is already denied" — or, for a row closed by recovery or a cancel, why it ended. */
function endedMessage(record: ApprovalRecord): string {
  if (record.endReason && (record.status === "expired" || record.status === "abandoned")) {
    return `approval ${record.id} is ${record.status}: ${record.endReason}`;
  }
  return `approval ${record.id} is already ${record.status}`;
}

export function createApprovalService(deps: ApprovalServiceDeps): ApprovalService {
  const ttlMs = deps.ttlMs ?? DEFAULT_APPROVAL_TTL_MS;
  const pollMs = deps.pollMs ?? DEFAULT_APPROVAL_POLL_MS;
  /** Runs waiting on each approval. Only wake-up callbacks live here; the state is in the store. */
  const waiters = new Map<string, Set<Waiter>>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let polling = false;

  interface Waiter {
    signal: AbortSignal;
    local?: (event: EngineEvent) => void;
    settle(record: ApprovalRecord): void;
    fail(error: unknown): void;
  }

  async function publishExpired(
    record: ApprovalRecord,
    local?: (event: EngineEvent) => void,
    reason?: string,
  ): Promise<void> {
    const event: EngineEvent = {
      type: "approval.expired",
      approvalId: record.id,
      runId: record.runId,
      sessionId: record.sessionId,
      capability: record.capability,
      ...(reason ? { reason } : {}),
      at: deps.clock.now(),
    };
    local?.(event);
    await deps.events.publish(event);
  }

  function decidedEvent(record: ApprovalRecord): EngineEvent | undefined {
    if (record.status !== "allowed" && record.status !== "denied") return undefined;
    return {
      type: "approval.decided",
      approvalId: record.id,
      runId: record.runId,
      sessionId: record.sessionId,
      capability: record.capability,
      status: record.status,
      scope: record.scope,
      decidedBy: record.decidedById ?? "",
      at: record.decidedAt ?? deps.clock.now(),
    };
  }

  function removeWaiter(id: string, waiter: Waiter): void {
    const set = waiters.get(id);
    set?.delete(waiter);
    if (set && set.size === 0) waiters.delete(id);
  }

  /** Looks at one approval as read from the store and settles its waiters when it is final. */
  async function review(id: string, record: ApprovalRecord | null): Promise<void> {
    const set = waiters.get(id);
    if (!set || set.size === 0) return;
    if (!record) {
      for (const w of [...set]) w.fail(new AppError("NOT_FOUND", `approval ${id} no longer exists`));
      return;
    }
    let current = record;
    const aborted = [...set].every((w) => w.signal.aborted);
    if (current.status === "pending" && (aborted || deps.clock.now() >= current.expiresAt)) {
      // Time is up, or every run that waited is gone: the request can never run later.
      const reason = aborted ? RUN_GONE_REASON : undefined;
      if (await deps.store.expire(id, reason)) await publishExpired(current, [...set][0]?.local, reason);
      current = (await deps.store.get(id)) ?? { ...current, status: "expired" };
    }
    if (current.status === "pending") return;
    for (const w of [...(waiters.get(id) ?? [])]) {
      const event = decidedEvent(current);
      if (event) w.local?.(event);
      w.settle(current);
    }
  }

  async function poll(): Promise<void> {
    timer = undefined;
    if (polling) return;
    polling = true;
    try {
      const ids = [...waiters.keys()];
      if (ids.length === 0) return;
      const rows = deps.store.getMany
        ? await deps.store.getMany(ids)
        : (await Promise.all(ids.map((id) => deps.store.get(id)))).filter(
            (r): r is ApprovalRecord => r !== null,
          );
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const id of ids) await review(id, byId.get(id) ?? null);
    } catch (error) {
      for (const set of waiters.values()) for (const w of [...set]) w.fail(error);
    } finally {
      polling = false;
      schedule();
    }
  }

  function schedule(delay = pollMs): void {
    if (timer || waiters.size === 0) return;
    timer = setTimeout(() => void poll(), delay);
  }

  function wake(id: string): void {
    if (!waiters.has(id)) return;
    void deps.store.get(id).then(
      (record) => review(id, record),
      () => undefined,
    );
  }

  /**
   * A new session grant also answers the requests of that session already waiting that it covers
   * (same capability and version, not forced by an ask rule), each recorded as decided by it.
   */
  async function releaseCovered(source: ApprovalRecord, grantId: string, decidedBy: Decider): Promise<void> {
    for (const sibling of await deps.store.listPending()) {
      if (
        sibling.id === source.id ||
        sibling.sessionId !== source.sessionId ||
        sibling.capability !== source.capability ||
        sibling.versionHash !== source.versionHash ||
        !sibling.sessionGrantable
      )
        continue;
      const now = deps.clock.now();
      const change = { status: "allowed", scope: "session", decidedById: decidedBy.userId, grantId } as const;
      if (!(await deps.store.decide(sibling.id, change, now))) continue; // expired or answered meanwhile
      await deps.events.publish({
        type: "approval.decided",
        approvalId: sibling.id,
        runId: sibling.runId,
        sessionId: sibling.sessionId,
        capability: sibling.capability,
        status: "allowed",
        scope: "session",
        decidedBy: decidedBy.label,
        grantId,
        at: now,
      });
      wake(sibling.id);
    }
  }

  return {
    wake,

    async request(input, local) {
      const now = deps.clock.now();
      const { session, capability, snapshot } = input;
      const record = await deps.store.create({
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
        expiresAt: now + ttlMs,
        sessionGrantable: input.sessionGrantable,
      });
      let userMessage: string | null = null;
      try {
        userMessage = capability.userMessage ? capability.userMessage(snapshot.value as JsonObject) : null;
      } catch {
        userMessage = null;
      }
      const summary: ApprovalSummary = {
        id: record.id,
        runId: record.runId,
        sessionId: record.sessionId,
        capability: record.capability,
        category: record.category,
        versionHash: record.versionHash,
        args: snapshot.value as JsonObject,
        argsHash: record.argsHash,
        requestedBy: record.requestedBy,
        apiKeyId: record.apiKeyId,
        userMessage,
        sessionGrantable: input.sessionGrantable,
        expiresAt: record.expiresAt,
        createdAt: record.createdAt,
      };
      const event: EngineEvent = { type: "approval.requested", approval: summary, at: now };
      local?.(event);
      await deps.events.publish(event);
      return record;
    },

    async wait(id, signal, local) {
      const first = await deps.store.get(id);
      if (!first) throw new AppError("NOT_FOUND", `approval ${id} no longer exists`);
      return new Promise<ApprovalRecord>((resolve, reject) => {
        const waiter: Waiter = {
          signal,
          ...(local ? { local } : {}),
          settle: (record) => {
            removeWaiter(id, waiter);
            signal.removeEventListener("abort", onAbort);
            resolve(record);
          },
          fail: (error) => {
            removeWaiter(id, waiter);
            signal.removeEventListener("abort", onAbort);
            reject(error);
          },
        };
        const onAbort = () => wake(id);
        const set = waiters.get(id) ?? new Set<Waiter>();
        set.add(waiter);
        waiters.set(id, set);
        signal.addEventListener("abort", onAbort, { once: true });
        // The first look settles an approval that is already decided, expired or aborted.
        void review(id, first).catch((error: unknown) => waiter.fail(error));
        schedule(Math.min(pollMs, Math.max(1, first.expiresAt - deps.clock.now())));
      });
    },

    async decide({ approvalId, answer, decidedBy }) {
      const record = await deps.store.get(approvalId);
      if (!record) throw new AppError("NOT_FOUND", `approval ${approvalId} does not exist`);
      if (decidedBy.apiKeyId && record.apiKeyId && decidedBy.apiKeyId === record.apiKeyId) {
        throw new AppError("FORBIDDEN", "an API key cannot answer its own approval requests");
      }
      if (record.status !== "pending") throw new AppError("CONFLICT", endedMessage(record));
      if (record.runId !== null && deps.isRunAlive && !(await deps.isRunAlive(record.runId))) {
        // The run died (or finished) before anyone answered: close the row, never say "allowed".
        if (await deps.store.expire(approvalId, RUN_GONE_REASON)) {
          await publishExpired(record, undefined, RUN_GONE_REASON);
        }
        throw new AppError("CONFLICT", `approval ${approvalId}: ${RUN_GONE_REASON}`);
      }
      const now = deps.clock.now();
      const scope: ApprovalScope | null = answer === "deny" ? null : answer;
      const won = await deps.store.decide(
        approvalId,
        { status: answer === "deny" ? "denied" : "allowed", scope, decidedById: decidedBy.userId },
        now,
      );
      if (!won) {
        const latest = await deps.store.get(approvalId);
        throw new AppError(
          "CONFLICT",
          latest
            ? endedMessage({ ...latest, status: latest.status === "pending" ? "expired" : latest.status })
            : `approval ${approvalId} is gone`,
        );
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
      await deps.events.publish({
        type: "approval.decided",
        approvalId: record.id,
        runId: record.runId,
        sessionId: record.sessionId,
        capability: record.capability,
        status: answer === "deny" ? "denied" : "allowed",
        scope,
        decidedBy: decidedBy.label,
        at: now,
      });
      wake(approvalId);
      if (grant) await releaseCovered(record, grant.id, decidedBy);
      const updated = await deps.store.get(approvalId);
      if (!updated) throw new AppError("NOT_FOUND", `approval ${approvalId} does not exist`);
      return updated;
    },

    consume(id, argsHash) {
      return deps.store.consume(id, argsHash, deps.clock.now());
    },

    async expireDue() {
      const now = deps.clock.now();
      let count = 0;
      for (const record of await deps.store.listPending()) {
        if (record.expiresAt > now) continue;
        if (await deps.store.expire(record.id)) {
          count += 1;
          await publishExpired(record);
          wake(record.id);
        }
      }
      return count;
    },

    async recover(isRunAlive, options = {}) {
      let count = 0;
      for (const record of await deps.store.listPending()) {
        if (waiters.has(record.id)) continue;
        if (record.runId === null && !options.includeDirectCalls && record.expiresAt > deps.clock.now())
          continue;
        const timedOut = record.expiresAt <= deps.clock.now();
        const alive = record.runId !== null && !timedOut && (await isRunAlive(record.runId));
        if (alive) continue;
        const reason = timedOut ? undefined : RUN_GONE_REASON;
        if (await deps.store.expire(record.id, reason)) {
          count += 1;
          await publishExpired(record, undefined, reason);
        }
      }
      // Allowed but never used: the waiter died between the decision and the consume.
      for (const record of await deps.store.listAllowedUnconsumed()) {
        if (waiters.has(record.id)) continue;
        if (record.runId === null) {
          // A direct call's waiter consumes within moments; only a long-stale one is surely dead.
          const stale = (record.decidedAt ?? 0) < deps.clock.now() - DIRECT_CALL_STALE_MS;
          if (!options.includeDirectCalls || !stale) continue;
        } else if (await isRunAlive(record.runId)) {
          continue;
        }
        if (await deps.store.abandon(record.id, ABANDONED_REASON)) {
          count += 1;
          await deps.events.publish({
            type: "approval.abandoned",
            approvalId: record.id,
            runId: record.runId,
            sessionId: record.sessionId,
            capability: record.capability,
            reason: ABANDONED_REASON,
            at: deps.clock.now(),
          });
        }
      }
      return count;
    },

    async expireForRun(runId, reason) {
      let count = 0;
      for (const record of await deps.store.listPending()) {
        if (record.runId !== runId) continue;
        if (await deps.store.expire(record.id, reason)) {
          count += 1;
          await publishExpired(record, undefined, reason);
          wake(record.id);
        }
      }
      return count;
    },
  };
}
