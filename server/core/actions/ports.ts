/**
 * Run store port: one row per action run (ActionRun), written at start and at finish, so runs
 * and their approvals survive a restart and can be recovered. Implemented over Prisma in
 * server/engine.
 */
import type { Mode, Surface } from "../capabilities/types";
import type { ObservationEnvelope } from "./envelope";

/**
 * `queued`: waiting for a sandbox (fair share between keys); then `running` until it finishes.
 * `interrupted`: the server process running it died; its envelope lists the calls the audit saw.
 */
export type RunStatus = "queued" | "running" | "ok" | "error" | "interrupted";

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
}

/**
 * A store may write `create`, `setQueued` and the rows of read calls late, in one group commit
 * with the run's other rows (a run that makes only read calls is one commit), as long as it
 * writes in the order it was called: a durable write commits everything queued before it.
 */
export interface RunStore {
  create(run: NewRun): Promise<void>;
  /** Commits what is queued now (the run row before an approval refers to it). */
  flush(): Promise<void>;
  finish(
    id: string,
    result: {
      status: "ok" | "error";
      errorKind: string | null;
      envelope: ObservationEnvelope;
      durationMs: number;
      finishedAt: number;
    },
  ): Promise<void>;
  /** queued <-> running while the run waits for a sandbox (CAS on the unfinished statuses). */
  setQueued(id: string, queued: boolean): Promise<void>;
  get(id: string): Promise<{ id: string; status: RunStatus; instanceId: string } | null>;
  /** Runs still marked running or queued (candidates for recovery). */
  listRunning(): Promise<{ id: string; instanceId: string }[]>;
  /**
   * running -> interrupted (the process that ran it is gone). CAS on status. The stored envelope
   * lists the calls the audit recorded for the run, each with whether its impl completed.
   */
  markInterrupted(id: string, message: string, finishedAt: number): Promise<boolean>;
  /** Ask for a running run to be cancelled wherever it runs; false when it is not running. */
  requestCancel(id: string, at: number): Promise<boolean>;
  /** Which of these running runs someone asked to cancel. */
  cancelRequested(ids: string[]): Promise<string[]>;
}
