/**
 * Plan mode as a dry run: in a plan-mode action a write, execute or external call does not run;
 * it is noted as a planned call and the guest gets a marker it can carry on with. An approved
 * plan becomes a grant for exactly those calls (capability and argument hash), each used once.
 */
import type { PlanGrant } from "../gate/trials";
import type { ArgsSnapshot } from "./snapshot";
import type { Category, JsonValue } from "./types";

/** One would-be call of a plan, as the envelope lists it and the approver sees it. */
export interface PlannedCall {
  /** `p1`, `p2`, ... in the order the action made them. */
  id: string;
  capability: string;
  category: Category;
  args: JsonValue;
  argsHash: string;
}

/** What the guest gets back instead of the call's result. */
export interface PlanMarker {
  planned: true;
  capability: string;
  id: string;
}

export const PLANNED_REASON = "planned: not run in plan mode";

export interface Planner {
  readonly calls: PlannedCall[];
  add(capability: string, category: Category, snapshot: ArgsSnapshot): PlanMarker;
}

export function createPlanner(): Planner {
  const calls: PlannedCall[] = [];
  return {
    calls,
    add(capability, category, snapshot) {
      const id = `p${calls.length + 1}`;
      calls.push({ id, capability, category, args: snapshot.value as JsonValue, argsHash: snapshot.hash });
      return { planned: true, capability, id };
    },
  };
}

/** The grant an approved plan gives its run: each planned call answers one call with the same capability and hash. */
export function createPlanGrant(
  planId: string,
  approvalId: string,
  calls: readonly Pick<PlannedCall, "id" | "capability" | "argsHash">[],
): PlanGrant & { used(): string[] } {
  const left = [...calls];
  const used: string[] = [];
  return {
    planId,
    approvalId,
    take(capability, argsHash) {
      const index = left.findIndex((c) => c.capability === capability && c.argsHash === argsHash);
      if (index < 0) return null;
      const [call] = left.splice(index, 1);
      if (!call) return null;
      used.push(call.id);
      return call.id;
    },
    used: () => [...used],
  };
}
