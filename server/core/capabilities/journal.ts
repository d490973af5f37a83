/**
 * The call journal of a durable action. Each capability call of a sandboxed run is recorded in
 * call order (its gate decision row, with `seq`): capability, argument hash, decision, and what
 * became of its impl (`started`, then `ok` with the result or `error` with the guest error).
 * A run that parks (a call waits for a human) or whose process died is resumed by running the
 * action again from the start: each call already in the journal is answered from it, after
 * checking that the capability and the argument hash match; the rest runs live.
 */
import type { ApprovalRecord, GateVerdict } from "../gate/ports";
import type { Category, ImageRef } from "./types";

export type JournalState = "waiting" | "started" | "ok" | "error";

export interface JournalEntry {
  seq: number;
  capability: string;
  category: Category;
  argsHash: string;
  decision: GateVerdict | "ask";
  reason: string;
  approvalId: string | null;
  /** null: decided and not run (deny, blocked, over budget). */
  state: JournalState | null;
  result: JournalResult | null;
  /** The guest clock readings made before this call. */
  clock: number[];
}

/** The guest-visible error of a failed call (toGuestError's shape). */
export interface JournaledGuestError {
  error: string;
  message: string;
  capability?: string;
  reason?: string;
  fields?: unknown[];
}

/** `v` absent: the impl returned undefined. */
export type JournalResult = { v?: unknown; images?: ImageRef[] } | { e: JournaledGuestError };

/** Arguments over this many characters are not kept in the journal (the hash always is). */
export const JOURNAL_ARGS_MAX = 64 * 1024;
/**
 * Results over this many characters of JSON are not kept: on replay such a read runs again and
 * such a write is treated as uncertain (a human decides), never repeated silently.
 */
export const JOURNAL_RESULT_MAX = 1024 * 1024;

/** What ends one attempt of a run early: the sandbox is released and nothing more runs in it. */
export type RunHalt =
  /** A call waits for a human: the run becomes a row (`waiting`) until the answer. */
  | { kind: "parked"; approvalId: string }
  /** The replay took another path than the journal: the run ends with this error. */
  | { kind: "diverged"; message: string }
  /** Another instance took the run over (this one stalled): this attempt writes nothing more. */
  | { kind: "lease_lost"; message: string }
  /** A human ended the action (a call that may already have happened was not run again). */
  | { kind: "ended"; message: string };

/** The journal as one attempt of a run sees it. */
export interface RunJournal {
  /** The entry an earlier attempt recorded at `seq`, if any. */
  entry(seq: number): JournalEntry | undefined;
  /** A replay (not the run's first attempt). */
  readonly replaying: boolean;
  /** Whether a journal entry refers to this approval. */
  refers(approvalId: string): boolean;
  /** Whether this attempt still owns the run (checked before an impl that may change the world). */
  holds(): Promise<boolean>;
  /** Stops the attempt; returns the error for the call in flight (the guest never sees it). */
  halt(halt: RunHalt): Error;
  /**
   * Waits for an approval during the hot window, then parks the run (a halt). `wait` waits for the
   * approval until `detach` aborts, without expiring it.
   */
  awaitApproval(
    approvalId: string,
    wait: (detach: AbortSignal) => Promise<ApprovalRecord>,
  ): Promise<ApprovalRecord>;
}

/** A failed call answered from the journal: the guest gets the error it got the first time. */
export class JournaledError extends Error {
  constructor(readonly guest: JournaledGuestError) {
    super(guest.message);
    this.name = "JournaledError";
  }
}

/** JSON text of a result for the journal, or null when it is too large to keep. */
export function encodeJournalResult(value: unknown, images: ImageRef[]): string | null {
  const body: { v?: unknown; images?: ImageRef[] } = {};
  if (value !== undefined) body.v = value;
  if (images.length > 0) body.images = images;
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch {
    return null;
  }
  return text.length > JOURNAL_RESULT_MAX ? null : text;
}

export function encodeJournalError(guest: JournaledGuestError): string {
  return JSON.stringify({ e: guest });
}

export function parseJournalResult(text: string | null): JournalResult | null {
  if (!text) return null;
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === "object" ? (parsed as JournalResult) : null;
  } catch {
    return null;
  }
}

export function parseJournalClock(text: string | null): number[] {
  if (!text) return [];
  try {
    const parsed = JSON.parse(text) as unknown;
    return Array.isArray(parsed) ? parsed.filter((n): n is number => typeof n === "number") : [];
  } catch {
    return [];
  }
}

const short = (hash: string) => `#${hash.slice(0, 12)}`;

/** "the action changed course at call N: expected X with arguments #h, got Y with arguments #h'". */
export function divergedMessage(
  seq: number,
  expected: { capability: string; argsHash: string },
  got: { capability: string; argsHash?: string; invalid?: string },
): string {
  const gotText = got.invalid
    ? `${got.capability}, which could not be called (${got.invalid})`
    : `${got.capability} with arguments ${short(got.argsHash ?? "")}`;
  return `the action changed course at call ${seq}: expected ${expected.capability} with arguments ${short(expected.argsHash)}, got ${gotText}. A replay must make the same calls in the same order; the journal answered the calls before it, and nothing after it ran`;
}

/** The replay ended before reaching a call the journal recorded as started. */
export function missedMessage(entry: JournalEntry): string {
  return `the action changed course: the replay finished without making call ${entry.seq} (${entry.capability} with arguments ${short(entry.argsHash)}), which the journal recorded`;
}
