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
import type { ApprovalRecord, Clock, EngineEvent, GateVerdict, GrantStore, RuleSource } from "./ports";
import { applyTrials, type BudgetHit, type BudgetStore, type PlanGrant, type ShadowSink } from "./trials";

const MINUTE_MS = 60_000;

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
  /**
   * An open request (pending, or allowed and unused) for this call that an earlier attempt of the
   * run made (it died before journaling it): the replay waits on it or uses its answer instead of
   * asking twice.
   */
  adoptApproval?: (capability: string, argsHash: string) => Promise<ApprovalRecord | null>;
  /** Called once the approval row exists, before the wait (a durable run journals the call as waiting). */
  onApprovalRequested?: (approval: ApprovalRecord) => Promise<void>;
  /**
   * How to wait for the human (a durable run waits a short hot window, then parks). Default: wait
   * until the approval is answered or expires.
   */
  awaitApproval?: (
    approvalId: string,
    wait: (detach: AbortSignal) => Promise<ApprovalRecord>,
  ) => Promise<ApprovalRecord>;
  /** An approved plan (this run only): answers the asks for exactly its calls. */
  plan?: PlanGrant;
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
  via: "rule" | "mode" | "grant" | "approval" | "plan";
  /** Set when the call went over a rule's budget. */
  budget?: BudgetHit;
}

export interface Gate {
  check(subject: GateSubject, capability: GateCapability, snapshot: ArgsSnapshot): Promise<GateOutcome>;
  /**
   * The outcome of an approval requested by an earlier attempt of the run (a replay reaches the
   * call that waited): waits for it if still pending, then consumes it as `check` would.
   */
  resumeApproval(
    subject: GateSubject,
    approvalId: string,
    snapshot: ArgsSnapshot,
    capability: Pick<GateCapability, "name" | "category">,
  ): Promise<GateOutcome>;
  readonly approvals: ApprovalService;
}

export interface GateDeps {
  rules: RuleSource;
  grants: GrantStore;
  approvals: ApprovalService;
  clock: Clock;
  /** Budget counters and shadow-hit records (trials.ts); without them budgets and shadows are inert. */
  budgets?: BudgetStore;
  shadows?: ShadowSink;
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
    let hasSessionGrant = false;
    let evaluation = evaluateGate({ ...base, hasSessionGrant });
    if (evaluation.decision === "ask" && evaluation.sessionGrantable) {
      hasSessionGrant = Boolean(
        await deps.grants.findActive(subject.session.id, capability.name, capability.versionHash),
      );
      if (hasSessionGrant) evaluation = evaluateGate({ ...base, hasSessionGrant });
    }
    const trial = await applyTrials(deps, subject, snapshot, { ...base, hasSessionGrant }, evaluation);
    evaluation = trial.evaluation;
    const budget = trial.budget ? { budget: trial.budget } : {};
    if (evaluation.decision !== "ask") {
      return {
        decision: evaluation.decision,
        reason: evaluation.reason,
        ruleId: evaluation.ruleId,
        approvalId: trial.approvalId,
        via: trial.approvalId ? "plan" : evaluation.via,
        ...budget,
      };
    }

    await subject.persisted?.();
    const rule = evaluation.ruleId ? rules.find((r) => r.id === evaluation.ruleId) : undefined;
    const adopted = await subject.adoptApproval?.(capability.name, snapshot.hash);
    const approval =
      adopted ??
      (await deps.approvals.request(
        {
          runId: subject.runId,
          session: subject.session,
          capability,
          snapshot,
          sessionGrantable: evaluation.sessionGrantable,
          ...(rule?.approvalTtlMinutes ? { ttlMs: rule.approvalTtlMinutes * MINUTE_MS } : {}),
        },
        subject.emit,
      ));
    await subject.onApprovalRequested?.(approval);
    return settleApproval(subject, approval.id, capability, snapshot, evaluation.ruleId, budget);
  }

  /** Waits for the human (pausing the action's deadline), then consumes the answer once. */
  async function settleApproval(
    subject: GateSubject,
    approvalId: string,
    capability: Pick<GateCapability, "name" | "category">,
    snapshot: ArgsSnapshot,
    ruleId: string | null,
    budget: { budget?: BudgetHit } = {},
    /** A replay at a journaled `waiting` call: the impl never started in any attempt. */
    resumed = false,
  ): Promise<GateOutcome> {
    const resume = subject.pauseDeadline?.();
    const waiting = traceApprovalWait(approvalId, capability, () => deps.clock.now());
    let answered: ApprovalRecord | undefined;
    try {
      const wait = (detach?: AbortSignal) =>
        deps.approvals.wait(approvalId, subject.signal, subject.emit, detach);
      answered = subject.awaitApproval ? await subject.awaitApproval(approvalId, wait) : await wait();
    } finally {
      resume?.();
      waiting.end(subject.signal.aborted ? "cancelled" : (answered?.status ?? "parked"));
    }
    const final = answered;
    const outcome = (decision: GateVerdict, reason: string): GateOutcome => ({
      decision,
      reason,
      ruleId,
      approvalId,
      via: "approval",
      ...budget,
    });
    if (subject.signal.aborted) return outcome("deny", "the run ended while waiting for approval");
    if (final.status === "denied") return outcome("deny", "denied by the approver");
    if (final.status !== "allowed") return outcome("deny", "the approval request expired");
    // Single use, bound to this exact snapshot: a second consumer or other arguments get nothing.
    // The one exception is a replay of the same run at a call whose impl never started: an
    // earlier attempt used the approval and died before it recorded the call (it is the run's).
    if (!(await deps.approvals.consume(approvalId, snapshot.hash))) {
      const usedByThisRun =
        resumed &&
        subject.runId !== null &&
        (await deps.approvals
          .get(approvalId)
          .then((r) => r?.runId === subject.runId && r.argsHash === snapshot.hash && r.consumedAt !== null));
      if (!usedByThisRun) return outcome("deny", "the approval was already used");
    }
    if (final.grantId) return outcome("allow", "covered by a session grant given on another request");
    return outcome("allow", final.scope === "session" ? "approved for this session" : "approved once");
  }

  return {
    check,
    resumeApproval: (subject, approvalId, snapshot, capability) =>
      settleApproval(subject, approvalId, capability, snapshot, null, {}, true),
    approvals: deps.approvals,
  };
}
