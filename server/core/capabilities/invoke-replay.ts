/**
 * A call an earlier attempt of the run already made, answered on a replay (journal.ts):
 *   ok / error      -> the recorded result or guest error, the impl does not run
 *   not run         -> the recorded refusal
 *   waiting         -> the approval it waited for: wait on (or park again), then go on live
 *   started, read   -> reads may be repeated: the impl runs again
 *   started, other  -> it may already have happened: a human decides (an `uncertain` approval);
 *                      allowed runs it again, denied (or expired) ends the action
 */
import type { GateOutcome, GateSubject } from "../gate/gate";
import type { ApprovalRecord } from "../gate/ports";
import type { CallContext, CallRecord, InvokeDeps } from "./invoke";
import { gateCapability, gateError } from "./invoke";
import { type JournalEntry, JournaledError, type RunJournal } from "./journal";
import type { RunAudit } from "./run-audit";
import type { ImageRef, Session } from "./types";

export interface ReplayContext {
  deps: InvokeDeps;
  journal: RunJournal;
  runId: string;
  session: Session;
  signal: AbortSignal;
  subject: () => GateSubject;
  audit: RunAudit;
  calls: CallRecord[];
  images: ImageRef[];
  decided(call: CallContext, outcome: GateOutcome, replayed?: boolean): Promise<unknown>;
  runImpl(call: CallContext, line: CallRecord): Promise<unknown>;
}

function lineOf(call: CallContext, prior: JournalEntry, reason?: string): CallRecord {
  return {
    capability: call.name,
    category: call.cap.spec.category,
    decision: prior.decision === "ask" ? "allow" : prior.decision,
    reason: reason ?? prior.reason,
    ms: 0,
    replayed: true,
  };
}

export async function replayFromJournal(
  ctx: ReplayContext,
  call: CallContext,
  prior: JournalEntry,
): Promise<unknown> {
  const result = prior.result;
  if (prior.state === "ok" && result && !("e" in result)) {
    ctx.calls.push(lineOf(call, prior));
    if (result.images) ctx.images.push(...result.images);
    return result.v;
  }
  if (prior.state === "error" && result && "e" in result) {
    ctx.calls.push(lineOf(call, prior));
    throw new JournaledError(result.e);
  }
  if (prior.state === null) {
    ctx.calls.push(lineOf(call, prior));
    throw gateError(call.name, {
      decision: prior.decision === "blocked" ? "blocked" : "deny",
      reason: prior.reason,
    });
  }
  if (prior.state === "waiting" && prior.approvalId) {
    const outcome = await ctx.deps.gate.resumeApproval(ctx.subject(), prior.approvalId, call.snapshot, {
      name: call.cap.name,
      category: call.cap.spec.category,
    });
    // The call that waited: now decided, it runs live.
    return ctx.decided(call, outcome);
  }
  // Started, and its outcome never recorded (or too large to keep).
  const rerunnable = call.cap.spec.category === "read" || call.cap.spec.journal === "nested";
  if (rerunnable) {
    const line = lineOf(call, prior, "run again on replay (reads may be repeated)");
    line.replayed = false;
    ctx.calls.push(line);
    return ctx.runImpl(call, line);
  }
  return uncertainCall(ctx, call, prior);
}

/** A non-read call whose outcome is unknown: never repeated unless a human says so. */
async function uncertainCall(ctx: ReplayContext, call: CallContext, prior: JournalEntry): Promise<unknown> {
  const { approvals } = ctx.deps.gate;
  let record: ApprovalRecord | null = prior.approvalId ? await approvals.get(prior.approvalId) : null;
  if (record?.kind !== "uncertain" || record.consumedAt !== null) {
    record = await approvals.request(
      {
        runId: ctx.runId,
        session: ctx.session,
        capability: gateCapability(call.cap),
        snapshot: call.snapshot,
        sessionGrantable: false,
        kind: "uncertain",
      },
      ctx.audit.emit,
    );
    await ctx.deps.decisions.settle(ctx.runId, call.seq, { approvalId: record.id }, { durable: true });
  }
  const approvalId = record.id;
  const final =
    record.status === "pending"
      ? await ctx.journal.awaitApproval(approvalId, (detach) =>
          approvals.wait(approvalId, ctx.signal, ctx.audit.emit, detach),
        )
      : record;
  if (final.status === "allowed" && (await approvals.consume(approvalId, call.snapshot.hash))) {
    const line = lineOf(call, prior, "run again: the approver said the call had not happened");
    line.replayed = false;
    ctx.calls.push(line);
    return ctx.runImpl(call, line);
  }
  const why =
    final.status === "denied"
      ? "the approver ended the action instead of running it again"
      : "nobody said to run it again in time, so the action ended";
  throw ctx.journal.halt({
    kind: "ended",
    message: `call ${call.seq} (${call.name}) may already have happened (its server process stopped inside it); ${why}`,
  });
}
