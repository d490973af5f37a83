/**
 * Composition root of the engine for the server: Prisma-backed ports, the sandbox pool, the
 * toolset module source and the database's effective categories, composed by createEngine
 * (server/core/actions/engine.ts). One engine per process, kept on globalThis like the Prisma
 * client. On first use it recovers runs and approvals left by a previous process, then keeps a
 * heartbeat and sweeps expired approvals.
 */

import type { EnginePorts } from "../../core/actions/engine";
import { createEngine, type Engine } from "../../core/actions/engine";
import { systemClock } from "../../core/gate/ports";
import { createSandboxPool } from "../../core/sandbox/pool";
import { type Db, getDb } from "../../db";
import { loadEnv } from "../../env";
import { createCapabilityCategoryLookup, createToolsetModuleSource } from "../toolsets";
import { createPrismaApprovalStore, createPrismaGrantStore } from "./approval-store";
import { HEARTBEAT_MS, heartbeat, isInstanceAlive, newInstanceId, pruneInstances } from "./instances";
import {
  createOutboxPublisher,
  createPrismaAssetStore,
  createPrismaDecisionSink,
  createPrismaRuleSource,
  createPrismaRunStore,
} from "./run-stores";
import { createWriteBatcher } from "./write-batcher";

export { ACTION_CONTRACT, renderModuleSignatures } from "../../core/actions/contract";

export interface ServerEngine extends Engine {
  instanceId: string;
  /** Stop the maintenance timer and the sandbox workers (tests, shutdown). */
  shutdown(): Promise<void>;
}

/**
 * Ports over the database; audit writes of the same tick share one batch transaction. Events go
 * straight into the Event outbox table, which every EventBus tails, so no bus is needed here
 * (`_bus` is accepted for callers written against the first version and not used).
 */
export function createPrismaPorts(db: Db, _bus?: () => unknown): EnginePorts {
  const batch = createWriteBatcher(db);
  return {
    rules: createPrismaRuleSource(db),
    grants: createPrismaGrantStore(db),
    approvals: createPrismaApprovalStore(db),
    decisions: createPrismaDecisionSink(db, batch),
    events: createOutboxPublisher(db, batch),
    runs: createPrismaRunStore(db, batch),
    assets: createPrismaAssetStore(db),
    clock: systemClock,
  };
}

export interface ServerEngineOptions {
  db: Db;
  ports?: EnginePorts;
  instanceId?: string;
  httpAllowedHosts?: string[];
  actionTimeoutMs?: number;
  approvalTtlMs?: number;
  workers?: number;
}

/** Builds and starts an engine over a database (getEngine() uses it with the process's settings). */
export async function startServerEngine(options: ServerEngineOptions): Promise<ServerEngine> {
  const { db } = options;
  const instanceId = options.instanceId ?? newInstanceId();
  const pool = createSandboxPool(options.workers ? { workers: options.workers } : {});
  const engine = createEngine({
    ports: options.ports ?? createPrismaPorts(db),
    instanceId,
    pool,
    sources: [createToolsetModuleSource({ db, pool })],
    categories: createCapabilityCategoryLookup(db),
    http: { allowedHosts: options.httpAllowedHosts ?? [] },
    ...(options.actionTimeoutMs ? { limits: { deadlineMs: options.actionTimeoutMs } } : {}),
    ...(options.approvalTtlMs ? { approvalTtlMs: options.approvalTtlMs } : {}),
  });

  await heartbeat(db, instanceId);
  const alive = (id: string) => isInstanceAlive(db, id);
  await engine.recover(alive, { startup: true });

  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    // A failed sweep is retried on the next tick; the run paths never depend on it.
    void (async () => {
      try {
        await heartbeat(db, instanceId);
        await engine.approvals.expireDue();
        await engine.recover(alive, { startup: false });
        await pruneInstances(db);
      } catch (error) {
        console.error(`engine: maintenance failed: ${error instanceof Error ? error.message : error}`);
      } finally {
        busy = false;
      }
    })();
  }, HEARTBEAT_MS);
  timer.unref();

  return {
    ...engine,
    instanceId,
    async shutdown() {
      clearInterval(timer);
      await pool.close();
      await db.setting.deleteMany({ where: { key: `instance:${instanceId}` } });
    },
  };
}

const holder = globalThis as typeof globalThis & { __toolstoreEngine?: Promise<ServerEngine> };

/** The process's engine, started on first use with the settings from server/env.ts. */
export function getEngine(): Promise<ServerEngine> {
  if (!holder.__toolstoreEngine) {
    const env = loadEnv();
    const started = startServerEngine({
      db: getDb(),
      httpAllowedHosts: env.TOOLSTORE_HTTP_ALLOWED_HOSTS,
      actionTimeoutMs: env.TOOLSTORE_ACTION_TIMEOUT_MS,
      approvalTtlMs: Math.round(env.TOOLSTORE_APPROVAL_TTL_MINUTES * 60_000),
    });
    holder.__toolstoreEngine = started;
    started.catch(() => {
      if (holder.__toolstoreEngine === started) holder.__toolstoreEngine = undefined;
    });
  }
  return holder.__toolstoreEngine;
}
