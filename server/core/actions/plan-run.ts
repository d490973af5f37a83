/**
 * Approve the plan, not each call: a plan-mode run's planned calls are stored as a plan; running
 * it asks a human once for the whole plan (one approval listing every call with its arguments),
 * then runs the action for real with a grant that covers exactly those calls, each once, in that
 * run only. Any other call (not planned, or with other arguments) goes through the gate as usual.
 */
import { createPlanGrant, type PlannedCall } from "../capabilities/plan-calls";
import { snapshotArgs } from "../capabilities/snapshot";
import { CATEGORIES, type Category, type Mode, type Session } from "../capabilities/types";
import { AppError, isAppError } from "../errors";
import type { ApprovalService } from "../gate/approvals";
import type { EngineEvent } from "../gate/ports";
import { type ActionPlan, buildEnvelope, type ObservationEnvelope } from "./envelope";
import type { ActionRunner, ActionRunResult, RunActionInput } from "./run-action";

/** The approval a plan asks for carries this capability name (no capability has it). */
export const PLAN_CAPABILITY = "toolstore.plan";

export interface StoredPlan {
  id: string;
  sessionId: string;
  userId: string | null;
  apiKeyId: string | null;
  code: string;
  calls: PlannedCall[];
  approvalId: string | null;
  executedRunId: string | null;
}

export interface PlanStore {
  save(plan: Omit<StoredPlan, "approvalId" | "executedRunId">): Promise<void>;
  get(id: string): Promise<StoredPlan | null>;
  /** Binds the approval that let the plan run; false when the plan already ran (or runs). CAS. */
  claim(id: string, approvalId: string): Promise<boolean>;
  setExecuted(id: string, runId: string): Promise<void>;
}

export interface RunPlanInput extends Omit<RunActionInput, "code"> {
  planId: string;
  /** The code to run; default: the plan-mode run's own code. */
  code?: string;
}

export interface PlanRunResult extends ActionRunResult {
  /** The plan approval, and the planned calls it answered. */
  approvalId: string;
  covered: string[];
}

export interface PlanRunDeps {
  plans: PlanStore;
  approvals: ApprovalService;
  run: ActionRunner["run"];
}

/** The plan's approval is as strong as its strongest call (the card's colour). */
function strongest(calls: readonly PlannedCall[]): Category {
  let rank = 0;
  for (const call of calls) rank = Math.max(rank, CATEGORIES.indexOf(call.category));
  return CATEGORIES[rank] ?? "write";
}

function summary(plan: StoredPlan): string {
  const counts = new Map<string, number>();
  for (const call of plan.calls) counts.set(call.capability, (counts.get(call.capability) ?? 0) + 1);
  const list = [...counts].map(([name, n]) => (n > 1 ? `${name} x${n}` : name)).join(", ");
  return `Run the plan of ${plan.calls.length} call${plan.calls.length === 1 ? "" : "s"}: ${list}`;
}

function ownPlan(plan: StoredPlan, session: Session): boolean {
  if (plan.apiKeyId) return plan.apiKeyId === session.apiKeyId;
  return plan.userId !== null && plan.userId === session.userId;
}

async function loadPlan(plans: PlanStore, planId: string, session: Session): Promise<StoredPlan> {
  const plan = await plans.get(planId);
  if (!plan || !ownPlan(plan, session)) {
    throw new AppError(
      "NOT_FOUND",
      `no plan ${planId} of yours: run the action in plan mode first; its envelope's plan.id names the plan`,
    );
  }
  if (plan.executedRunId) {
    throw new AppError("CONFLICT", `plan ${planId} was already approved and ran (run ${plan.executedRunId})`);
  }
  return plan;
}

/** Asks for the whole plan; resolves with the consumed approval's id, or throws GATE_DENIED. */
async function approvePlan(
  deps: PlanRunDeps,
  plan: StoredPlan,
  session: Session,
  signal: AbortSignal,
  emit?: (event: EngineEvent) => void,
): Promise<string> {
  const snapshot = snapshotArgs({
    plan: plan.id,
    calls: plan.calls.map((c) => ({
      id: c.id,
      capability: c.capability,
      category: c.category,
      args: c.args,
    })),
  });
  const message = summary(plan);
  const approval = await deps.approvals.request(
    {
      runId: null,
      session,
      capability: {
        name: PLAN_CAPABILITY,
        category: strongest(plan.calls),
        versionHash: "plan",
        userMessage: () => message,
      },
      snapshot,
      sessionGrantable: false,
    },
    emit,
  );
  const final = await deps.approvals.wait(approval.id, signal, emit);
  const refuse = (reason: string) =>
    new AppError("GATE_DENIED", `permission_denied: ${PLAN_CAPABILITY}: ${reason}`, {
      details: { error: "permission_denied", capability: PLAN_CAPABILITY, reason, plan: plan.id },
    });
  if (signal.aborted) throw refuse("the request ended while waiting for approval");
  if (final.status === "denied") throw refuse("the plan was denied by the approver");
  if (final.status !== "allowed") throw refuse("the plan's approval request expired");
  if (!(await deps.approvals.consume(approval.id, snapshot.hash)))
    throw refuse("the approval was already used");
  return approval.id;
}

/**
 * Runs an approved plan. A plan-mode session runs it in the default mode: the human approved
 * these calls, and everything else asks.
 */
export async function runPlan(deps: PlanRunDeps, input: RunPlanInput): Promise<PlanRunResult> {
  const plan = await loadPlan(deps.plans, input.planId, input.session);
  const mode: Mode = input.session.mode === "plan" ? "default" : input.session.mode;
  const session: Session = { ...input.session, mode };
  const signal = input.signal ?? new AbortController().signal;
  const approvalId = await approvePlan(deps, plan, session, signal, input.onEvent);
  if (!(await deps.plans.claim(plan.id, approvalId))) {
    throw new AppError("CONFLICT", `plan ${plan.id} is already running or ran`);
  }
  const grant = createPlanGrant(plan.id, approvalId, plan.calls);
  const { planId: _planId, code, onEvent, ...rest } = input;
  const result = await deps.run({
    ...rest,
    session,
    code: code ?? plan.code,
    plan: grant,
    onEvent(event) {
      // The plan names its run as soon as it starts (a console tab follows it from there).
      if (event.type === "run.started")
        void deps.plans.setExecuted(plan.id, event.runId).catch(() => undefined);
      onEvent?.(event);
    },
  });
  await deps.plans.setExecuted(plan.id, result.runId);
  const covered = grant.used();
  const envelope = { ...result.envelope, approvedPlan: { id: plan.id, approvalId, covered } };
  return { ...result, envelope, approvalId, covered };
}

/** A surface's answer to "run this plan": the run's envelope, or a refused one naming why not. */
export async function planEnvelope(start: () => Promise<PlanRunResult>): Promise<ObservationEnvelope> {
  const began = Date.now();
  try {
    return (await start()).envelope;
  } catch (error) {
    if (!isAppError(error) || !["GATE_DENIED", "NOT_FOUND", "CONFLICT"].includes(error.code)) throw error;
    return buildEnvelope({
      error: { kind: "refused", message: error.message },
      logs: [],
      calls: [],
      images: [],
      durationMs: Date.now() - began,
    });
  }
}

/** What the engine stores after a plan-mode run: its plan, when it planned anything. */
export function planToStore(
  plan: ActionPlan,
  session: Session,
  code: string,
): Omit<StoredPlan, "approvalId" | "executedRunId"> {
  return {
    id: plan.id,
    sessionId: session.id,
    userId: session.userId || null,
    apiKeyId: session.apiKeyId ?? null,
    code,
    calls: plan.calls,
  };
}
