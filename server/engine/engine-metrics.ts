/**
 * The engine's side of /metrics: its events are counted as they are published (runs by outcome,
 * gate decisions), and the gauges read the sandbox pool, the pending approvals and the upstream
 * MCP servers' status at scrape time.
 */
import type { EnginePorts } from "../core/actions/engine";
import type { SandboxPool } from "../core/sandbox/pool";
import type { Db } from "../db";
import { getMetrics, meteredEvents } from "../infra/metrics";

export function meteredPorts(ports: EnginePorts): EnginePorts {
  return { ...ports, events: meteredEvents(ports.events) };
}

/** Registers the engine's gauges; returns their removal (engine shutdown). */
export function engineMetricsSource(db: Db, pool: SandboxPool): () => void {
  return getMetrics().setSource("engine", async () => {
    const [pendingApprovals, upstreams] = await Promise.all([
      db.approval.count({ where: { status: "pending" } }),
      db.mcpServer.findMany({ where: { enabled: true }, select: { name: true, status: true } }),
    ]);
    return { sandbox: pool.stats(), pendingApprovals, upstreams };
  });
}
