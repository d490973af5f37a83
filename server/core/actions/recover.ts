/**
 * Recovery after a restart: runs left "running" by a process that is gone are marked failed, and
 * approvals whose run no longer exists or no longer runs are expired, so they can never execute
 * later.
 */
import type { ApprovalService } from "../gate/approvals";
import type { Clock } from "../gate/ports";
import type { RunStore } from "./ports";

export interface RecoveryDeps {
  runs: RunStore;
  approvals: ApprovalService;
  clock: Clock;
  /** This process. Its own running runs are never touched. */
  instanceId: string;
  /** Whether another instance still runs (multi-instance deployments). Default: no other instance is alive. */
  isInstanceAlive?: (instanceId: string) => Promise<boolean> | boolean;
  /** At startup: also expire pending direct-call approvals (their waiter died with the old process). */
  startup?: boolean;
}

export async function recoverAfterRestart(
  deps: RecoveryDeps,
): Promise<{ runsAbandoned: number; approvalsExpired: number }> {
  const alive = async (instanceId: string) =>
    instanceId === deps.instanceId || (deps.isInstanceAlive ? await deps.isInstanceAlive(instanceId) : false);
  let runsAbandoned = 0;
  for (const run of await deps.runs.listRunning()) {
    if (await alive(run.instanceId)) continue;
    if (
      await deps.runs.markAbandoned(
        run.id,
        "the server process running this action stopped",
        deps.clock.now(),
      )
    ) {
      runsAbandoned += 1;
    }
  }
  const approvalsExpired = await deps.approvals.recover(
    async (runId) => {
      const run = await deps.runs.get(runId);
      return (
        run !== null && (run.status === "running" || run.status === "queued") && (await alive(run.instanceId))
      );
    },
    { includeDirectCalls: deps.startup === true },
  );
  return { runsAbandoned, approvalsExpired };
}
