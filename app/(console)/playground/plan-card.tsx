"use client";
/**
 * The plan of a plan-mode run: the write, execute and external calls the action would have made,
 * each with its arguments, and one button that asks the approval queue for exactly these calls.
 * Once a human allows the plan, the same code runs for real and the timeline follows that run.
 */
import Link from "next/link";
import { CategoryBadge } from "@/app/_components/category-badge";
import { JsonView } from "@/app/_components/json-view";
import type { ActionPlan } from "@/server/core/actions/envelope";

export function PlanCard({
  plan,
  canRun,
  asking,
  onAsk,
}: {
  plan: ActionPlan;
  canRun: boolean;
  /** The plan's approval request is open (the mutation waits for a human). */
  asking: boolean;
  onAsk: () => void;
}) {
  const n = plan.calls.length;
  return (
    <div className="plan-card" data-testid="plan-card">
      <div className="plan-card-head">
        <strong>
          Plan: {n} call{n === 1 ? "" : "s"} not run
        </strong>
        <span className="muted">Reads ran for real; these would change something.</span>
      </div>
      <ol className="plan-calls">
        {plan.calls.map((call) => (
          <li key={call.id} data-testid="plan-call">
            <span className="mono">{call.id}</span> <span className="mono">{call.capability}</span>{" "}
            <CategoryBadge category={call.category} />
            <JsonView value={call.args} label="arguments" />
          </li>
        ))}
      </ol>
      {asking ? (
        <p className="plan-card-wait" role="status">
          <span className="pulse" aria-hidden /> Waiting for approval of the plan in the{" "}
          <Link href="/approvals">approvals queue</Link>. Once allowed, exactly these calls run, once each;
          any other call asks as usual.
        </p>
      ) : (
        <button
          type="button"
          className="btn btn-primary"
          onClick={onAsk}
          disabled={!canRun}
          title={canRun ? undefined : "Running needs the approver role"}
        >
          Ask to run this plan
        </button>
      )}
    </div>
  );
}
