/**
 * The permission gate: evaluates rules, mode and category (evaluate.ts), looks up session
 * grants, and runs the approval flow when the answer is "ask". It returns a verdict; recording
 * it and running the impl is run.invoke's job (capabilities/invoke.ts).
 */
import type { ArgsSnapshot } from "../capabilities/snapshot";
import type { Category, JsonObject, Session } from "../capabilities/types";
import { traceApprovalWait } from "../trace-spans";
import type { ApprovalService } from "./approvals";
import { evaluateGate } from "./evaluate";
import type { Clock, EngineEvent, GateVerdict, GrantStore, RuleSource } from "./ports";

export interface GateSubject {
  /** The run id to persist with the approval; null for a direct call. */
  runId: string | null;
  session: Session;
  signal: AbortSignal;
  /** Stop the sandbox deadline while a human decides; returns the resume function. */
  pauseDeadline?: () => () => void;
  /** Live events for the surface that started the run. */
  emit?: (event: EngineEvent) => void;
  /** Resolves once the run's own row is written (an approval row refers to it). */
  persisted?: () => Promise<void>;
}

export interface GateCapability {
  name: string;
  category: Category;
  versionHash: string;
  userMessage?: (args: JsonObject) => string;
}

export interface GateOutcome {
  decision: GateVerdict;
  reason: string;
  ruleId: string | null;
  approvalId: string | null;
  via: "rule" | "mode" | "grant" | "approval";
}

export interface Gate {
  check(subject: GateSubject, capability: GateCapability, snapshot: ArgsSnapshot): Promise<GateOutcome>;
  readonly approvals: ApprovalService;
}

export interface GateDeps {
  rules: RuleSource;
  grants: GrantStore;
  approvals: ApprovalService;
  clock: Clock;
}

export function createGate(deps: GateDeps): Gate {
  async function check(
    subject: GateSubject,
    capability: GateCapability,
    snapshot: ArgsSnapshot,
  ): Promise<GateOutcome> {
    const rules = await deps.rules.listRules();
    const base = {
      mode: subject.session.mode,
      category: capability.category,
      capability: capability.name,
      versionHash: capability.versionHash,
      args: snapshot.value as JsonObject,
      rules,
    };
    let evaluation = evaluateGate({ ...base, hasSessionGrant: false });
    if (evaluation.decision === "ask" && evaluation.sessionGrantable) {
      const grant = await deps.grants.findActive(subject.session.id, capability.name, capability.versionHash);
      if (grant) evaluation = evaluateGate({ ...base, hasSessionGrant: true });
    }
    if (evaluation.decision !== "ask") {
      return {
        decision: evaluation.decision,
        reason: evaluation.reason,
        ruleId: evaluation.ruleId,
        approvalId: null,
        via: evaluation.via,
      };
    }

    await subject.persisted?.();
    const approval = await deps.approvals.request(
      {
        runId: subject.runId,
        session: subject.session,
        capability,
        snapshot,
        sessionGrantable: evaluation.sessionGrantable,
      },
      subject.emit,
    );
    const resume = subject.pauseDeadline?.();
    const waiting = traceApprovalWait(approval.id, capability, () => deps.clock.now());
    let final: Awaited<ReturnType<ApprovalService["wait"]>> | undefined;
    try {
      final = await deps.approvals.wait(approval.id, subject.signal, subject.emit);
    } finally {
      resume?.();
      waiting.end(subject.signal.aborted ? "cancelled" : (final?.status ?? "failed"));
    }
    const outcome = (decision: GateVerdict, reason: string): GateOutcome => ({
      decision,
      reason,
      ruleId: evaluation.ruleId,
      approvalId: approval.id,
      via: "approval",
    });
    if (subject.signal.aborted) return outcome("deny", "the run ended while waiting for approval");
    if (final.status === "denied") return outcome("deny", "denied by the approver");
    if (final.status !== "allowed") return outcome("deny", "the approval request expired");
    // Single use, bound to this exact snapshot: a second consumer or other arguments get nothing.
    if (!(await deps.approvals.consume(approval.id, snapshot.hash))) {
      return outcome("deny", "the approval was already used");
    }
    if (final.grantId) return outcome("allow", "covered by a session grant given on another request");
    return outcome("allow", final.scope === "session" ? "approved for this session" : "approved once");
  }

  return { check, approvals: deps.approvals };
}
