/** Counts and short lists for the dashboard; every row selects its fields explicitly. */
import type { Db } from "../db";

export async function dashboardSummary(db: Db) {
  const now = new Date();
  const dayAgo = new Date(now.getTime() - 24 * 60 * 60 * 1000);
  const [pendingApprovals, runsToday, failedToday, toolsets, capabilities, keys, recentRuns, pending] =
    await Promise.all([
      db.approval.count({ where: { status: "pending", expiresAt: { gt: now } } }),
      db.actionRun.count({ where: { startedAt: { gt: dayAgo } } }),
      db.actionRun.count({ where: { startedAt: { gt: dayAgo }, status: "error" } }),
      db.toolset.count(),
      db.capability.count({ where: { active: true } }),
      db.apiKey.count({ where: { revokedAt: null } }),
      db.actionRun.findMany({
        orderBy: { startedAt: "desc" },
        take: 8,
        select: {
          id: true,
          title: true,
          surface: true,
          status: true,
          errorKind: true,
          mode: true,
          startedAt: true,
          durationMs: true,
        },
      }),
      db.approval.findMany({
        where: { status: "pending", expiresAt: { gt: now } },
        orderBy: { createdAt: "asc" },
        take: 5,
        select: {
          id: true,
          capability: true,
          category: true,
          requestedBy: true,
          expiresAt: true,
          createdAt: true,
        },
      }),
    ]);
  return {
    counts: { pendingApprovals, runsToday, failedToday, toolsets, capabilities, keys },
    recentRuns,
    pending,
  };
}
