/**
 * The observation envelope, a fixed contract: what every surface gets back from an
 * action. Types and one builder.
 */
import type { CallRecord } from "../capabilities/invoke";
import type { PlannedCall } from "../capabilities/plan-calls";
import type { ImageRef, JsonValue } from "../capabilities/types";
import type { LogEntry, SandboxErrorKind } from "../sandbox/protocol";

/**
 * `interrupted`: the server process died mid-run and the run could not be resumed (recorded by
 * recovery, never by the sandbox). `diverged`: a replay of a durable run took another path than
 * its journal. `ended`: a human ended the run instead of repeating a call that may already have
 * happened.
 */
export type EnvelopeErrorKind = SandboxErrorKind | "interrupted" | "diverged" | "ended";

export interface EnvelopeError {
  kind: EnvelopeErrorKind;
  message: string;
  stack?: string;
}

export interface ObservationEnvelope {
  ok: boolean;
  /** The JSON value the action returned (absent when it returned undefined or failed). */
  result?: JsonValue;
  error?: EnvelopeError;
  logs: LogEntry[];
  calls: CallRecord[];
  images: ImageRef[];
  durationMs: number;
  /**
   * Plan mode: the calls the action would have made and did not (writes, execute, external).
   * Its id is the run's; approving it lets the same code run with exactly these calls granted.
   */
  plan?: ActionPlan;
  /** A run of an approved plan: the plan, its approval, and the planned calls it answered. */
  approvedPlan?: { id: string; approvalId: string; covered: string[] };
}

export interface ActionPlan {
  id: string;
  calls: PlannedCall[];
}

export function buildEnvelope(parts: {
  result?: JsonValue | undefined;
  error?: EnvelopeError | undefined;
  logs: LogEntry[];
  logsDropped?: number;
  calls: CallRecord[];
  images: ImageRef[];
  durationMs: number;
  plan?: ActionPlan | undefined;
}): ObservationEnvelope {
  const logs = [...parts.logs];
  if (parts.logsDropped && parts.logsDropped > 0) {
    logs.push({
      level: "warn",
      text: `[${parts.logsDropped} console entries were dropped or cut to fit the log limit]`,
    });
  }
  const envelope: ObservationEnvelope = { ok: parts.error === undefined } as ObservationEnvelope;
  if (parts.error) {
    const error: EnvelopeError = { kind: parts.error.kind, message: parts.error.message };
    if (parts.error.stack) error.stack = parts.error.stack;
    envelope.error = error;
  } else if (parts.result !== undefined) {
    envelope.result = parts.result;
  }
  envelope.logs = logs;
  envelope.calls = parts.calls.map((c) => ({ ...c }));
  envelope.images = parts.images.map((i) => ({ ...i }));
  envelope.durationMs = parts.durationMs;
  if (parts.plan) envelope.plan = { id: parts.plan.id, calls: parts.plan.calls.map((c) => ({ ...c })) };
  return envelope;
}
