/** Shared by the pool's tests: a run stuck in one long built-in call, which only the watchdog stops. */
import type { SandboxPool } from "./pool";

/** Runs the stuck action (deadline 100 ms): its error kind, and how many workers were replaced meanwhile. */
export async function runStuckAction(
  pool: SandboxPool,
  fairnessKey?: string,
): Promise<{ kind: string | undefined; replaced: number }> {
  const before = pool.stats().workersReplaced;
  const stuck = await pool.runAction({
    code: 'export default () => new Array(3e7).join("ab").length',
    modules: {},
    limits: { deadlineMs: 100 },
    onCall: async () => ({ ok: true }),
    ...(fairnessKey ? { fairnessKey } : {}),
  });
  return { kind: stuck.error?.kind, replaced: pool.stats().workersReplaced - before };
}
