/**
 * Composition root of the engine for the server: Prisma-backed ports, the sandbox pool, the
 * modules and module sources, and the database's effective categories, composed by createEngine
 * (server/core/actions/engine.ts). One engine per process, kept on globalThis like the Prisma
 * client. On first use it recovers runs and approvals left by a previous process, records the
 * fixed modules' capabilities, then keeps a heartbeat and sweeps expired approvals.
 *
 * The seams for a new kind of capability: a fixed module is a ModuleFactory in `modules`; a set
 * that changes at run time (rows in the database, external servers) is a ModuleSource in
 * `sources`; entries for `store.list` that are not modules are a CatalogSource; a toolset
 * language is a BindingRuntime in `runtimes`. Nothing under server/core changes for any of them.
 */

import type { EnginePorts } from "../../core/actions/engine";
import { createEngine, type Engine } from "../../core/actions/engine";
import { builtinModules } from "../../core/capabilities/builtins";
import type { CatalogSource, ModuleFactory, ModuleSource } from "../../core/capabilities/ports";
import { systemClock } from "../../core/gate/ports";
import type { PythonRuntime } from "../../core/python/runtime";
import { createPythonRuntime } from "../../core/python/runtime";
import type { BindingRuntimes } from "../../core/sandbox/binding-runtime";
import { createSandboxPool } from "../../core/sandbox/pool";
import { type Db, getDb } from "../../db";
import { loadEnv } from "../../env";
import { getPythonRuntime } from "../python-runtime";
import { recordRegistryCapabilities } from "../registry-capabilities";
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
 * straight into the Event outbox table, which every EventBus tails.
 */
export function createPrismaPorts(db: Db): EnginePorts {
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
  /** More fixed modules (tests, canaries), beside the built-ins. */
  extraModules?: ModuleFactory[];
  /** More module sources, beside the toolsets. */
  extraSources?: ModuleSource[];
  /**
   * The Python runtime (toolset.py bindings). Default: a new one that shutdown closes; the
   * process's engine passes the shared one that publishing parses with.
   */
  python?: PythonRuntime;
}

/** Builds and starts an engine over a database (getEngine() uses it with the process's settings). */
export async function startServerEngine(options: ServerEngineOptions): Promise<ServerEngine> {
  const { db } = options;
  const instanceId = options.instanceId ?? newInstanceId();
  const pool = createSandboxPool(options.workers ? { workers: options.workers } : {});
  const python = options.python ?? createPythonRuntime();
  const ownsPython = options.python === undefined;
  const runtimes: BindingRuntimes = { typescript: pool, python };
  const modules: ModuleFactory[] = [
    builtinModules({ http: { allowedHosts: options.httpAllowedHosts ?? [] } }),
    ...(options.extraModules ?? []),
  ];
  const sources: ModuleSource[] = [
    createToolsetModuleSource({ db, runtimes }),
    ...(options.extraSources ?? []),
  ];
  const catalogSources: CatalogSource[] = [];
  const engine = createEngine({
    ports: options.ports ?? createPrismaPorts(db),
    instanceId,
    pool,
    modules,
    sources,
    catalogSources,
    categories: createCapabilityCategoryLookup(db),
    ...(options.actionTimeoutMs ? { limits: { deadlineMs: options.actionTimeoutMs } } : {}),
    ...(options.approvalTtlMs ? { approvalTtlMs: options.approvalTtlMs } : {}),
  });

  await heartbeat(db, instanceId);
  const alive = (id: string) => isInstanceAlive(db, id);
  await engine.recover(alive, { startup: true });
  // Built-in capabilities have rows from the start, so every page counts and lists the same set.
  await recordRegistryCapabilities(db, await engine.registry.modules());

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
      await engine.close();
      await Promise.allSettled(
        Object.values(runtimes).map((r) =>
          r === pool || (r === python && !ownsPython) ? undefined : r?.close(),
        ),
      );
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
      python: getPythonRuntime(),
    });
    holder.__toolstoreEngine = started;
    started.catch(() => {
      if (holder.__toolstoreEngine === started) holder.__toolstoreEngine = undefined;
    });
  }
  return holder.__toolstoreEngine;
}
