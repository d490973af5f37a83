/**
 * Composition root of the engine for the server: Prisma-backed ports, the sandbox pool, the
 * modules and module sources, and the database's effective categories, composed by createEngine
 * (server/core/actions/engine.ts). One engine per process, kept on globalThis like the Prisma
 * client. On first use it retires the heartbeat rows of earlier boots on its address, recovers
 * runs and approvals left by processes that are gone, records the fixed modules' capabilities,
 * then keeps a heartbeat and sweeps. On PostgreSQL the instance channel (LISTEN/NOTIFY) wakes
 * approval waiters, cancels and event tails on every instance at once; polling stays the fallback.
 *
 * The seams for a new kind of capability: a fixed module is a ModuleFactory in `modules`; a set
 * that changes at run time (rows in the database, external servers) is a ModuleSource in
 * `sources`; entries for `store.list` that are not modules are a CatalogSource; a toolset
 * language is a BindingRuntime in `runtimes`. Nothing under server/core changes for any of them.
 */

import type { EnginePorts } from "../core/actions/engine";
import { createEngine, type Engine } from "../core/actions/engine";
import { builtinModules } from "../core/capabilities/builtins";
import type { CatalogSource, ModuleFactory, ModuleSource } from "../core/capabilities/ports";
import { systemClock } from "../core/gate/ports";
import type { PythonRuntime } from "../core/python/runtime";
import { createPythonRuntime } from "../core/python/runtime";
import type { BindingRuntimes } from "../core/sandbox/binding-runtime";
import { createSandboxPool } from "../core/sandbox/pool";
import {
  createPythonScriptRunner,
  createSandboxScriptRunner,
  createSkillCatalogSource,
  createSkillsModule,
  type SkillStore,
} from "../core/skills";
import { type Db, dbTarget, getDb } from "../db";
import { loadEnv } from "../env";
import { createPrismaApprovalStore, createPrismaGrantStore } from "../infra/approval-store";
import { type InstanceChannel, processChannel } from "../infra/instance-channel";
import {
  createLivenessCheck,
  DEFAULT_HEARTBEAT_MS,
  heartbeat,
  instanceAddress,
  instanceTimeoutMs,
  newInstanceId,
  pruneInstances,
  retirePredecessors,
} from "../infra/instances";
import {
  createOutboxPublisher,
  createPrismaAssetStore,
  createPrismaDecisionSink,
  createPrismaRuleSource,
  createPrismaRunStore,
} from "../infra/run-stores";
import { createWriteBatcher } from "../infra/write-batcher";
import { createMcpModuleSource, type McpModuleSource } from "../modules/mcp-servers";
import { createPrismaSkillStore } from "../modules/skills";
import { createCapabilityCategoryLookup, createToolsetModuleSource } from "../modules/toolsets";
import { endOrphanedTasks } from "../services/mcp-tasks";
import { getPythonRuntime } from "../services/python-runtime";
import { recordRegistryCapabilities } from "../services/registry-capabilities";

export { ACTION_CONTRACT, renderModuleSignatures } from "../core/actions/contract";

export interface ServerEngine extends Engine {
  instanceId: string;
  /** The external MCP servers' source: its connections (console "refresh", status). */
  mcp: McpModuleSource;
  /** The skills `toolstore/skills` reads; the MCP skill resources read the same. */
  skills: SkillStore;
  /** Stop the maintenance timer and the sandbox workers (tests, shutdown). */
  shutdown(): Promise<void>;
}

/**
 * Ports over the database; the engine's audit writes share group commits (write-batcher.ts): a
 * run that makes only read calls is one commit. Events go into the Event outbox table, which
 * every EventBus tails.
 */
export function createPrismaPorts(db: Db, channel?: InstanceChannel): EnginePorts {
  const batch = createWriteBatcher(db);
  const approvals = createPrismaApprovalStore(db);
  const runs = createPrismaRunStore(db, batch);
  const events = createOutboxPublisher(db, batch);
  return {
    rules: createPrismaRuleSource(db),
    grants: createPrismaGrantStore(db),
    approvals: channel ? announceApprovals(approvals, channel) : approvals,
    decisions: createPrismaDecisionSink(db, batch),
    events: channel
      ? {
          async publish(event, options) {
            await events.publish(event, options);
            channel.notify("event");
          },
        }
      : events,
    runs: channel
      ? {
          ...runs,
          async requestCancel(id, at) {
            const requested = await runs.requestCancel(id, at);
            if (requested) channel.notify("cancel", id);
            return requested;
          },
        }
      : runs,
    assets: createPrismaAssetStore(db, batch),
    clock: systemClock,
  };
}

/** Every committed change of an approval's state is announced, so its waiter wakes at once. */
function announceApprovals(
  store: EnginePorts["approvals"],
  channel: InstanceChannel,
): EnginePorts["approvals"] {
  const announced =
    <A extends unknown[]>(change: (id: string, ...rest: A) => Promise<boolean>) =>
    async (id: string, ...rest: A) => {
      const won = await change(id, ...rest);
      if (won) channel.notify("approval", id);
      return won;
    };
  return {
    ...store,
    decide: announced(store.decide),
    expire: announced(store.expire),
    abandon: announced(store.abandon),
  };
}

export interface ServerEngineOptions {
  db: Db;
  ports?: EnginePorts;
  instanceId?: string;
  httpAllowedHosts?: string[];
  actionTimeoutMs?: number;
  approvalTtlMs?: number;
  /** Sandbox pool sizing and fair share (server/core/sandbox/pool.ts). */
  workers?: number;
  maxRunsPerKey?: number;
  queueTimeoutMs?: number;
  /** Where toolsets' declared hosts are really sent (TOOLSTORE_EGRESS_ALIASES). */
  hostAliases?: Readonly<Record<string, string>>;
  /** More fixed modules (tests, canaries), beside the built-ins. */
  extraModules?: ModuleFactory[];
  /** More module sources, beside the toolsets. */
  extraSources?: ModuleSource[];
  /** Where `toolstore/skills`, store.list and the MCP resources read skills; default: the database. */
  skills?: SkillStore;
  /** host:port this process serves on (instanceAddress): a restart there retires its predecessors. */
  address?: string;
  /** Heartbeat period; an instance silent for two and a half of them is dead. */
  heartbeatMs?: number;
  /** The push channel between instances (LISTEN/NOTIFY on PostgreSQL); none: polling only. */
  channel?: InstanceChannel;
  cancelPollMs?: number;
  approvalPollMs?: number;
  /**
   * The Python runtime (toolset.py bindings). Default: a new one that shutdown closes; the
   * process's engine passes the shared one that publishing parses with.
   */
  python?: PythonRuntime;
}

/** Builds and starts an engine over a database (getEngine() uses it with the process's settings). */
export async function startServerEngine(options: ServerEngineOptions): Promise<ServerEngine> {
  const { db, channel } = options;
  const instanceId = options.instanceId ?? newInstanceId();
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const timeoutMs = instanceTimeoutMs(heartbeatMs);
  const alive = createLivenessCheck(db, timeoutMs);
  const pool = createSandboxPool({
    ...(options.workers ? { workers: options.workers } : {}),
    ...(options.maxRunsPerKey ? { maxRunsPerKey: options.maxRunsPerKey } : {}),
    ...(options.queueTimeoutMs ? { queueTimeoutMs: options.queueTimeoutMs } : {}),
    ...(options.hostAliases ? { hostAliases: options.hostAliases } : {}),
  });
  const python = options.python ?? createPythonRuntime();
  const ownsPython = options.python === undefined;
  const runtimes: BindingRuntimes = { typescript: pool, python };
  const skills = options.skills ?? createPrismaSkillStore(db);
  let engineRef: Engine | undefined;
  // Skill scripts run as nested actions: the registry's mounted modules decide what they import.
  const skillScripts = createSandboxScriptRunner({
    pool,
    async mountedModules(session) {
      if (!engineRef) throw new Error("engine not ready");
      const mounted = await engineRef.registry.mountedModules(session);
      return Object.fromEntries(mounted.map((m) => [m.name, m.exports.map((e) => e.exportName)]));
    },
    ...(options.actionTimeoutMs ? { limits: { deadlineMs: options.actionTimeoutMs } } : {}),
  });
  const modules: ModuleFactory[] = [
    builtinModules({ http: { allowedHosts: options.httpAllowedHosts ?? [] } }),
    () => [
      createSkillsModule({
        store: skills,
        javascript: skillScripts,
        // .py scripts run in the same locked-down Pyodide workers as toolset.py (own trust domain).
        python: createPythonScriptRunner({
          python,
          ...(options.actionTimeoutMs ? { timeoutMs: options.actionTimeoutMs } : {}),
        }),
      }),
    ],
    ...(options.extraModules ?? []),
  ];
  const ports = options.ports ?? createPrismaPorts(db, channel);
  // External MCP servers; engine.close() (and so shutdown) stops their processes.
  const mcp = createMcpModuleSource({ db, assets: ports.assets });
  const sources: ModuleSource[] = [
    createToolsetModuleSource({ db, runtimes }),
    mcp,
    ...(options.extraSources ?? []),
  ];
  const catalogSources: CatalogSource[] = [createSkillCatalogSource(skills)];
  const engine = createEngine({
    ports,
    instanceId,
    isInstanceAlive: alive,
    pool,
    modules,
    sources,
    catalogSources,
    categories: createCapabilityCategoryLookup(db),
    ...(options.actionTimeoutMs ? { limits: { deadlineMs: options.actionTimeoutMs } } : {}),
    ...(options.approvalTtlMs ? { approvalTtlMs: options.approvalTtlMs } : {}),
    ...(options.approvalPollMs ? { approvalPollMs: options.approvalPollMs } : {}),
    ...(options.cancelPollMs ? { cancelPollMs: options.cancelPollMs } : {}),
  });
  engineRef = engine;
  const unsubscribe = channel
    ? [
        channel.on("approval", (id) => engine.approvals.wake(id)),
        channel.on("cancel", () => void engine.checkCancels()),
      ]
    : [];

  const address = options.address ?? null;
  await heartbeat(db, instanceId, { address });
  if (address) await retirePredecessors(db, instanceId, address);
  await engine.recover(alive, { startup: true });
  // After the runs: a dead process's MCP tasks end from their (now interrupted) runs.
  await endOrphanedTasks(db, { instanceId, isInstanceAlive: alive });
  // Built-in capabilities have rows from the start, so every page counts and lists the same set.
  await recordRegistryCapabilities(db, await engine.registry.modules());

  // The heartbeat has its own timer: a slow sweep must never make a live instance look dead.
  let beating = false;
  const beat = setInterval(() => {
    if (beating) return;
    beating = true;
    heartbeat(db, instanceId, { address })
      .catch((error: unknown) => {
        console.error(`engine: heartbeat failed: ${error instanceof Error ? error.message : error}`);
      })
      .finally(() => {
        beating = false;
      });
  }, heartbeatMs);
  beat.unref();

  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    // A failed sweep is retried on the next tick; the run paths never depend on it.
    void (async () => {
      try {
        await engine.approvals.expireDue();
        await engine.recover(alive, { startup: false });
        await endOrphanedTasks(db, { instanceId, isInstanceAlive: alive });
        await pruneInstances(db);
      } catch (error) {
        console.error(`engine: maintenance failed: ${error instanceof Error ? error.message : error}`);
      } finally {
        busy = false;
      }
    })();
  }, heartbeatMs);
  timer.unref();

  return {
    ...engine,
    instanceId,
    mcp,
    skills,
    async shutdown() {
      clearInterval(timer);
      clearInterval(beat);
      for (const off of unsubscribe) off();
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
      address: instanceAddress(env.HOST, env.PORT),
      heartbeatMs: env.TOOLSTORE_HEARTBEAT_MS,
      channel: processChannel(dbTarget()),
      ...(env.TOOLSTORE_SANDBOX_WORKERS ? { workers: env.TOOLSTORE_SANDBOX_WORKERS } : {}),
      maxRunsPerKey: env.TOOLSTORE_SANDBOX_RUNS_PER_KEY,
      queueTimeoutMs: env.TOOLSTORE_SANDBOX_QUEUE_TIMEOUT_MS,
      hostAliases: env.TOOLSTORE_EGRESS_ALIASES,
      python: getPythonRuntime(),
    });
    holder.__toolstoreEngine = started;
    started.catch(() => {
      if (holder.__toolstoreEngine === started) holder.__toolstoreEngine = undefined;
    });
  }
  return holder.__toolstoreEngine;
}
