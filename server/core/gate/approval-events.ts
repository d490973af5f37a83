/**
 * The live-feed events of an approval's life (requested, decided, expired, abandoned), built from
 * its stored row, and the card summary a request publishes.
 */

import type { ArgsSnapshot } from "../capabilities/snapshot";
import type { JsonObject } from "../capabilities/types";
import type { ApprovalRecord, ApprovalSummary, EngineEvent } from "./ports";

type EventOf<T extends EngineEvent["type"]> = Extract<EngineEvent, { type: T }>;

/** Which approval an event speaks of; every approval event but `requested` opens with it. */
function subject(record: ApprovalRecord) {
  return {
    approvalId: record.id,
    runId: record.runId,
    sessionId: record.sessionId,
    capability: record.capability,
  };
}

export function expiredEvent(
  record: ApprovalRecord,
  at: number,
  reason?: string,
): EventOf<"approval.expired"> {
  return { type: "approval.expired", ...subject(record), ...(reason ? { reason } : {}), at };
}

export function abandonedEvent(
  record: ApprovalRecord,
  reason: string,
  at: number,
): EventOf<"approval.abandoned"> {
  return { type: "approval.abandoned", ...subject(record), reason, at };
}

/** The decision as announced: `decidedBy` is the label of who answered (or the stored user id). */
export function decidedEvent(
  record: ApprovalRecord,
  decision: {
    status: "allowed" | "denied";
    scope: ApprovalRecord["scope"];
    decidedBy: string;
    grantId?: string;
    at: number;
  },
): EventOf<"approval.decided"> {
  const { status, scope, decidedBy, grantId, at } = decision;
  return {
    type: "approval.decided",
    ...subject(record),
    status,
    scope,
    decidedBy,
    ...(grantId ? { grantId } : {}),
    at,
  };
}

/** A decided row as its waiter's local feed sees it; undefined while it is not allowed or denied. */
export function decidedEventOfRow(record: ApprovalRecord, now: number): EngineEvent | undefined {
  if (record.status !== "allowed" && record.status !== "denied") return undefined;
  return decidedEvent(record, {
    status: record.status,
    scope: record.scope,
    decidedBy: record.decidedById ?? "",
    at: record.decidedAt ?? now,
  });
}

/** What the approval card shows: the snapshot's arguments and the capability's own message. */
export function approvalSummary(
  record: ApprovalRecord,
  snapshot: ArgsSnapshot,
  userMessage: ((args: JsonObject) => string) | undefined,
): ApprovalSummary {
  const args = snapshot.value as JsonObject;
  let message: string | null = null;
  try {
    message = userMessage ? userMessage(args) : null;
  } catch {
    // A capability's message is a courtesy; a throwing one must not block the request.
    message = null;
  }
  return {
    id: record.id,
    runId: record.runId,
    sessionId: record.sessionId,
    capability: record.capability,
    category: record.category,
    versionHash: record.versionHash,
    args,
    argsHash: record.argsHash,
    requestedBy: record.requestedBy,
    apiKeyId: record.apiKeyId,
    userMessage: message,
    sessionGrantable: record.sessionGrantable,
    expiresAt: record.expiresAt,
    createdAt: record.createdAt,
  };
}
