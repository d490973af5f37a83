/**
 * Ports of the gate and of the engine's live feed. The services layer implements them over
 * Prisma (server/engine); tests use server/core/testing/memory-ports.ts. Every state
 * change an instance needs to see lives behind a port, never only in memory.
 */
import type { Category, JsonValue, Mode, Surface } from "../capabilities/types";
import type { PolicyRule } from "./rules";

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface RuleSource {
  /** Enabled rules only. Called for every gated call; cache in the implementation if needed. */
  listRules(): Promise<PolicyRule[]>;
}

export interface SessionGrant {
  id: string;
  sessionId: string;
  capability: string;
  /** Version of the capability's code the grant was given for; another version does not match. */
  versionHash: string;
  approvalId: string | null;
  grantedById: string | null;
  createdAt: number;
}

export interface GrantStore {
  /** An unrevoked grant for exactly this session, capability and version. */
  findActive(sessionId: string, capability: string, versionHash: string): Promise<SessionGrant | null>;
  create(grant: Omit<SessionGrant, "id" | "createdAt">): Promise<SessionGrant>;
}

/** `abandoned`: allowed, but the run that asked died before it used the approval (nothing ran). */
export type ApprovalStatus = "pending" | "allowed" | "denied" | "expired" | "abandoned";
export type ApprovalScope = "once" | "session";

export interface ApprovalRecord {
  id: string;
  /** Null for a direct call outside an action. */
  runId: string | null;
  sessionId: string;
  capability: string;
  category: Category;
  versionHash: string;
  /** Canonical JSON of the argument snapshot the impl will receive. */
  argsSnapshot: string;
  argsHash: string;
  /** Human label of who asked: `alice (playground)`, `key "laptop-claude"`. */
  requestedBy: string;
  requesterUserId: string | null;
  apiKeyId: string | null;
  status: ApprovalStatus;
  scope: ApprovalScope | null;
  decidedById: string | null;
  decidedAt: number | null;
  consumedAt: number | null;
  expiresAt: number;
  createdAt: number;
  /** False when an ask rule forced the prompt: a session grant never answers it. */
  sessionGrantable: boolean;
  /** Set when a session grant given on a sibling request of the same session answered this one. */
  grantId: string | null;
  /** Why it expired or was abandoned, when that was not simply the TTL. */
  endReason: string | null;
  /**
   * `call`: may this call run? `uncertain`: the call may already have happened (the process
   * running it died inside it); allowing runs it again, denying ends the action.
   */
  kind: ApprovalKind;
}

export type ApprovalKind = "call" | "uncertain";

export type NewApproval = Omit<
  ApprovalRecord,
  | "id"
  | "status"
  | "scope"
  | "decidedById"
  | "decidedAt"
  | "consumedAt"
  | "createdAt"
  | "grantId"
  | "endReason"
  | "kind"
> & { kind?: ApprovalKind; ttlMs?: number };

export interface PendingFilter {
  /** Only rows whose `expiresAt` is at or before this time (ms). */
  expiresBy?: number;
  /**
   * Leave out the rows a parked run waits for whose time is not up at this time (ms): a parked
   * run's request is alive on every instance, so recovery need not read 10,000 of them a pass.
   */
  exceptParkedAt?: number;
}

/** All state changes are compare-and-set; `false` means another writer got there first. */
export interface ApprovalStore {
  create(input: NewApproval): Promise<ApprovalRecord>;
  get(id: string): Promise<ApprovalRecord | null>;
  /** Several at once (the wait loop polls every waiting request in one read). Missing ids are left out. */
  getMany?(ids: string[]): Promise<ApprovalRecord[]>;
  /** pending -> allowed|denied, only while `expiresAt > now`. */
  decide(
    id: string,
    change: {
      status: "allowed" | "denied";
      scope: ApprovalScope | null;
      decidedById: string | null;
      /** The session grant that answers it (a sibling request's "allow for session"). */
      grantId?: string | null;
    },
    now: number,
  ): Promise<boolean>;
  /** allowed and not yet consumed and `argsHash` matches -> consumedAt = now. Single use. */
  consume(id: string, argsHash: string, now: number): Promise<boolean>;
  /** pending -> expired (expiry, or the run that asked is gone), with the reason when there is one. */
  expire(id: string, reason?: string): Promise<boolean>;
  /** allowed and not consumed -> abandoned (the run died before it used the approval). */
  abandon(id: string, reason: string): Promise<boolean>;
  /** The pending requests; with `expiresBy`, only those whose time is up by then. */
  listPending(filter?: PendingFilter): Promise<ApprovalRecord[]>;
  /**
   * The open requests of one run: pending, or allowed and not yet consumed (a replay finds a
   * request its earlier attempt made and died before journaling).
   */
  listOpenForRun(runId: string): Promise<ApprovalRecord[]>;
  /** Allowed approvals not yet consumed (recovery abandons those whose run is gone). */
  listAllowedUnconsumed(): Promise<ApprovalRecord[]>;
}

export type GateVerdict = "allow" | "deny" | "blocked";

/**
 * A call's place in its run's journal (durable actions): its position, what became of it, its
 * arguments and the guest clock readings before it. Set on the decisions of sandboxed runs.
 */
export interface JournalFields {
  seq: number;
  /** waiting (asks a human) | started (impl running) | ok | error; null: not run. */
  state: "waiting" | "started" | "ok" | "error" | null;
  /** Canonical JSON of the arguments, null when over the journal's cap. */
  args: string | null;
  /** JSON array of guest clock readings, or null. */
  clock: string | null;
}

export interface DecisionRecord {
  runId: string | null;
  sessionId: string;
  capability: string;
  category: Category;
  decision: GateVerdict;
  reason: string;
  ruleId: string | null;
  approvalId: string | null;
  argsHash: string;
  /** Canonical JSON of the arguments; null when over 64 KiB or not snapshotted (what-if reads it). */
  args?: string | null;
  /** Time to reach the decision, including an approval wait. */
  ms: number;
  at: number;
  /** "ask": the call waits for a human (a journal row written before the wait). */
  decisionOverride?: "ask";
  journal?: JournalFields;
}

/** A journaled call's outcome, written after its impl (or its approval's new id). */
export interface JournalSettle {
  state?: "started" | "ok" | "error";
  /** JSON of the result ({"v": ...}), of the guest error ({"e": ...}), or {"asset": id}. */
  result?: string | null;
  approvalId?: string;
}

/**
 * `durable`: the call's impl waits for this record (a write, execute or external call let
 * through). Without it the record may be written late, in a group commit with the run's other
 * rows; it resolves once written either way.
 */
export interface RecordOptions {
  durable?: boolean;
}

export interface DecisionSink {
  /** A journaled decision (with `journal`) is an upsert on (runId, seq): an asked call's row is written twice. */
  record(decision: DecisionRecord, options?: RecordOptions): Promise<void>;
  /** Updates the journal row (runId, seq). */
  settle(runId: string, seq: number, change: JournalSettle, options?: RecordOptions): Promise<void>;
}

/** What the approval card shows; rendered from the snapshot, never from agent prose. */
export interface ApprovalSummary
  extends Pick<
    ApprovalRecord,
    | "id"
    | "runId"
    | "sessionId"
    | "capability"
    | "category"
    | "versionHash"
    | "argsHash"
    | "requestedBy"
    | "apiKeyId"
    | "expiresAt"
    | "createdAt"
  > {
  args: JsonValue;
  /** The capability's `userMessage(args)`, when it has one. */
  userMessage: string | null;
  /** False when an ask rule forces a prompt every time ("allow for session" would not apply). */
  sessionGrantable: boolean;
}

export type EngineEvent =
  | {
      type: "run.started";
      runId: string;
      sessionId: string;
      surface: Surface;
      userId: string;
      apiKeyId: string | null;
      mode: Mode;
      title: string;
      at: number;
    }
  | {
      type: "run.finished";
      runId: string;
      sessionId: string;
      ok: boolean;
      errorKind: string | null;
      durationMs: number;
      calls: number;
      at: number;
    }
  | {
      /** The run released its sandbox: a call waits for a human, the run is a row until then. */
      type: "run.parked";
      runId: string;
      sessionId: string;
      approvalId: string;
      at: number;
    }
  | {
      /** The run runs again from the start (replay `replay`); `fromJournal` calls are answered from its journal. */
      type: "run.resumed";
      runId: string;
      sessionId: string;
      replay: number;
      fromJournal: number;
      instanceId: string;
      at: number;
    }
  | ({ type: "gate.decision" } & DecisionRecord)
  | {
      type: "call.finished";
      runId: string | null;
      sessionId: string;
      capability: string;
      ok: boolean;
      ms: number;
      at: number;
    }
  | {
      /** Refused before the gate: unknown capability or arguments that fail its schema (no decision row). */
      type: "call.refused";
      runId: string | null;
      sessionId: string;
      capability: string;
      category: Category | null;
      reason: string;
      /** The arguments that are wrong, each with what is wrong with it. */
      fields: { field: string; reason: string }[];
      at: number;
    }
  | { type: "approval.requested"; approval: ApprovalSummary; at: number }
  | {
      type: "approval.decided";
      approvalId: string;
      runId: string | null;
      sessionId: string;
      capability: string;
      status: "allowed" | "denied";
      scope: ApprovalScope | null;
      decidedBy: string;
      /** Set when a session grant given on a sibling request answered this one. */
      grantId?: string | null;
      at: number;
    }
  | {
      type: "approval.expired";
      approvalId: string;
      runId: string | null;
      sessionId: string;
      capability: string;
      /** Set when it did not simply time out (the run ended or was cancelled). */
      reason?: string;
      at: number;
    }
  | {
      type: "approval.abandoned";
      approvalId: string;
      runId: string | null;
      sessionId: string;
      capability: string;
      reason: string;
      at: number;
    };

export interface EventPublisher {
  /**
   * Persist (outbox) and fan out. Must not throw for a slow subscriber. `lazy`: live information
   * only, which may join a later commit (at most a few tens of ms late).
   */
  publish(event: EngineEvent, options?: { lazy?: boolean }): Promise<void>;
}
