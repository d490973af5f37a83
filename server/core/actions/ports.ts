/**
 * Run store port: one row per action run (ActionRun), written at start and at finish, so runs
 * and their approvals survive a restart and can be recovered. Implemented over Prisma in
 * server/engine.
 */

import type { JournalEntry } from "../capabilities/journal";
import type { Mode, Session, Surface } from "../capabilities/types";
import type { SandboxLimits } from "../sandbox/limits";
import type { ObservationEnvelope } from "./envelope";

/**
 * `queued`: waiting for a sandbox (fair share between keys); then `running` until it finishes.
 * `waiting`: parked: a call waits for a human and the run holds no sandbox; it is resumed by
 * replay from its journal, on any instance, once the human answered.
 * `interrupted`: the server process running it died and the run could not be resumed; its
 * envelope lists the calls the audit saw.
 */
export type RunStatus = "queued" | "running" | "waiting" | "ok" | "error" | "interrupted";
/** Statuses of a run that is not over: `waiting` is parked (a row) until a human answers. */
export const UNFINISHED_STATUSES = ["queued", "running", "waiting"] as const satisfies readonly RunStatus[];
const UNFINISHED = new Set<string>(UNFINISHED_STATUSES);
export const isUnfinished = (status: string | undefined): boolean =>
  status !== undefined && UNFINISHED.has(status);

/** What a replay needs besides the code: who runs it, and under which limits. */
export interface RunContext {
  session: Session;
  limits: SandboxLimits;
}

/** A run as the store keeps it for a replay. */
export interface StoredRun {
  id: string;
  status: RunStatus;
  instanceId: string;
  /** The fencing token of the instance that owns the run now. */
  leaseToken: number;
  code: string;
  codeHash: string;
  /** JSON text of the input, or null for undefined. */
  inputJson: string | null;
  context: RunContext | null;
  seed: string;
  replays: number;
  computeMs: number;
  waitingFor: string | null;
  title: string;
  mcpRequestId: string | null;
  startedAt: number;
  /** The final envelope, once the run finished. */
  envelope: ObservationEnvelope | null;
}

export interface FinishResult {
  status: "ok" | "error";
  errorKind: string | null;
  envelope: ObservationEnvelope;
  durationMs: number;
  finishedAt: number;
}

export interface NewRun {
  id: string;
  sessionId: string;
  surface: Surface;
  userId: string | null;
  apiKeyId: string | null;
  title: string;
  code: string;
  mode: Mode;
  /** The server process that runs it; recovery uses it to find runs that died with a restart. */
  instanceId: string;
  startedAt: number;
  /** JSON-RPC id of the MCP request that started it (notifications/cancelled names it). */
  mcpRequestId?: string | null;
  /** Durable actions: what a replay needs (sha256 of code, input JSON, context, random seed). */
  codeHash?: string;
  inputJson?: string | null;
  context?: RunContext;
  seed?: string;
}

/** A run's status and the instance that owns it. */
export interface RunState {
  id: string;
  status: RunStatus;
  instanceId: string;
}

/**
 * A store may write `create`, `setQueued` and the rows of read calls late, in one group commit
 * with the run's other rows (a run that makes only read calls is one commit), as long as it
 * writes in the order it was called: a durable write commits everything queued before it.
 */
export interface RunStore {
  create(run: NewRun): Promise<void>;
  /**
   * Commits what is queued now (the run row before an approval refers to it). `disk: false`: it
   * need not be on disk yet, only committed (a crash of the process keeps it; a power cut may lose
   * what the store had not synced within its bounded lag). Default: on disk.
   */
  flush(options?: { disk?: boolean }): Promise<void>;
  /**
   * The run's final row, committed but not necessarily on disk yet (as `flush({ disk: false })`):
   * what a power cut loses of it, recovery replays from the journal. With `fence` (the owner's
   * lease token), only while the run still has that token and is unfinished: false means another
   * instance took the run over (or it ended).
   */
  finish(id: string, result: FinishResult, fence?: number): Promise<boolean>;
  /**
   * The run's row is still queued for its first commit (so no other instance can have taken it
   * over): its finish and its run.finished event may go into one commit.
   */
  unwritten?(id: string): boolean;
  /** queued <-> running while the run waits for a sandbox (CAS on the unfinished statuses). */
  setQueued(id: string, queued: boolean): Promise<void>;
  get(id: string): Promise<RunState | null>;
  /** The rows of these runs that exist (any order). */
  getMany(ids: string[]): Promise<RunState[]>;
  /** Runs still marked running or queued (candidates for recovery). */
  listRunning(): Promise<{ id: string; instanceId: string; leaseToken: number }[]>;

  // ── Durable actions ──
  /** The run as stored, for a replay; null when there is no such run. */
  load(id: string): Promise<StoredRun | null>;
  /** The run's call journal, in call order. */
  journal(id: string): Promise<JournalEntry[]>;
  /**
   * running -> waiting (parked on `approvalId`), only while the run has the `fence` token; adds
   * `computeMs` to the run's compute. Commits what is queued first. False: the lease was lost.
   */
  park(
    id: string,
    park: { approvalId: string; computeMs: number; at: number; fence: number },
  ): Promise<boolean>;
  /**
   * Take the run over for a replay: only while its token is `fromToken` and its status is one of
   * `from`; sets status running, the instance, token + 1 and replays + 1. Returns the new token.
   */
  claim(
    id: string,
    claim: { instanceId: string; fromToken: number; from: RunStatus[] },
  ): Promise<number | null>;
  /** Whether the run still has this token (a stalled owner finds out it lost the run). */
  holds(id: string, token: number): Promise<boolean>;
  /**
   * Parked runs whose approval is answered or expired (ready to resume), with their owner and
   * token; `limit` at most.
   */
  listResumable(limit: number): Promise<{ id: string; instanceId: string; leaseToken: number }[]>;
  /** Which of these runs have finished, with their envelopes (surfaces waiting here look them up). */
  finishedAmong(ids: string[]): Promise<{ id: string; envelope: ObservationEnvelope }[]>;
  /** Parked runs' lease of a dead instance, for recovery (owner, token). */
  listWaiting(): Promise<{ id: string; instanceId: string; leaseToken: number; waitingFor: string | null }[]>;
  /**
   * running -> interrupted (the process that ran it is gone). CAS on status. The stored envelope
   * lists the calls the audit recorded for the run, each with whether its impl completed.
   */
  markInterrupted(id: string, message: string, finishedAt: number, fence?: number): Promise<boolean>;
  /** Ask for a running run to be cancelled wherever it runs; false when it is not running. */
  requestCancel(id: string, at: number): Promise<boolean>;
  /** Which of these running runs someone asked to cancel. */
  cancelRequested(ids: string[]): Promise<string[]>;
}
