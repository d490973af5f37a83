/**
 * Recovery after a restart: runs left "running" by a process that is gone are taken over and run
 * again from their journal (durable actions: journaled calls are answered from it, a write whose
 * outcome was never recorded asks a human first); a run that cannot be resumed (a row from before
 * durable runs, or one replayed too often) is marked `interrupted` (its envelope lists the calls
 * the audit saw). Approvals whose run no longer exists or no longer runs are expired, and allowed
 * approvals nobody used become `abandoned`, so none of them can execute later and every row says
 * what happened. Parked runs (`waiting`) stay as they are: any instance resumes them once answered.
 */
import type { ApprovalService } from "../gate/approvals";
import type { Clock } from "../gate/ports";
import type { RunStore } from "./ports";

const INTERRUPTED_MESSAGE =
  "the server process running this action stopped before it finished; `calls` lists what the audit recorded (outcome `unknown`: the call was let through but never reported back, so its side effect may have happened)";

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
  /** Takes a dead instance's run over and replays it; false when it cannot be resumed. */
  resume?: (runId: string) => Promise<boolean>;
}

export async function recoverAfterRestart(
  deps: RecoveryDeps,
): Promise<{ runsInterrupted: number; approvalsExpired: number; runsResumed: number }> {
  const alive = async (instanceId: string) =>
    instanceId === deps.instanceId || (deps.isInstanceAlive ? await deps.isInstanceAlive(instanceId) : false);
  const dead: { id: string; leaseToken: number }[] = [];
  let runsResumed = 0;
  const running = await deps.runs.listRunning();
  for (const run of running) {
    if (await alive(run.instanceId)) continue;
    if (deps.resume && (await deps.resume(run.id).catch(() => false))) {
      runsResumed += 1;
      continue;
    }
    // Not resumed here: maybe another instance took it over first (then it is alive).
    const now = await deps.runs.get(run.id);
    if (now && now.instanceId === run.instanceId && (now.status === "running" || now.status === "queued")) {
      dead.push(run);
    }
  }
  // A run another instance took over meanwhile has another token: it is left alone.
  const gone = new Set(dead.map((d) => d.id));
  // Approvals before runs: whoever reads a run as `interrupted` finds its approvals final too,
  // never one still pending or allowed-unused in the queue.
  // A run this pass found alive, or took over, keeps its approvals even if its instance has died
  // since: the next pass resumes it (its replay waits on the same request) or finds it gone. Asking
  // again here raced with the owner's last heartbeat: a run whose owner died between the two
  // questions lost its pending approval just before another instance took it over.
  const seen = new Set(running.map((run) => run.id));
  const approvalsExpired = await deps.approvals.recover(
    async (runIds) => {
      const live = new Set<string>();
      const instances = new Map<string, Promise<boolean>>();
      for (const run of await deps.runs.getMany(runIds.filter((id) => !gone.has(id)))) {
        if (run.status === "waiting") live.add(run.id);
        else if (run.status === "running" || run.status === "queued") {
          if (seen.has(run.id)) {
            live.add(run.id);
            continue;
          }
          if (!instances.has(run.instanceId)) instances.set(run.instanceId, alive(run.instanceId));
          if (await instances.get(run.instanceId)) live.add(run.id);
        }
      }
      return live;
    },
    { includeDirectCalls: deps.startup === true },
  );
  let runsInterrupted = 0;
  for (const { id, leaseToken } of dead) {
    if (await deps.runs.markInterrupted(id, INTERRUPTED_MESSAGE, deps.clock.now(), leaseToken)) {
      runsInterrupted += 1;
    }
  }
  return { runsInterrupted, approvalsExpired, runsResumed };
}
