/**
 * Composition root of the engine for the server: Prisma-backed ports (server/infra), the sandbox
 * pool and the Python runtime, the built-in modules, and every registered source plug-in
 * (server/modules), composed by createEngine (server/core/actions/engine.ts). One engine per
 * process (getEngine). On first use it retires the heartbeat rows of earlier boots on its address,
 * recovers runs and approvals left by processes that are gone, records the fixed modules'
 * capabilities, then keeps a heartbeat and sweeps (./maintenance.ts). On PostgreSQL the instance
 * channel (LISTEN/NOTIFY) wakes approval waiters, cancels and event tails on every instance at
 * once; polling stays the fallback.
 *
 * A new source of capabilities is a plug-in in its own folder, registered in server/modules; a
 * toolset language is a BindingRuntime in `runtimes`. Nothing here changes for either.
 */
import type { EnginePorts } from "../core/actions/engine";
import { createEngine, type Engine } from "../core/actions/engine";
import { builtinModules } from "../core/capabilities/builtins";
import type { CatalogSource, ModuleFactory, ModuleSource } from "../core/capabilities/ports";
import type { Session } from "../core/capabilities/types";
import type { LibraryModule } from "../core/libraries/types";
import type { PythonRuntime } from "../core/python/runtime";
import { createPythonRuntime } from "../core/python/runtime";
import type { BindingRuntimes } from "../core/sandbox/binding-runtime";
import { createSandboxPool, type SandboxPool } from "../core/sandbox/pool";
import { type Db, dbTarget, getDb } from "../db";
import { loadEnv, publicUrl } from "../env";
import type { AuditCheckpointWriter } from "../infra/audit-checkpoint";
import { auditLogFor } from "../infra/audit-log";
import { createPrismaPorts } from "../infra/engine-ports";
import { type InstanceChannel, processChannel } from "../infra/instance-channel";
import {
  createLivenessCheck,
  DEFAULT_HEARTBEAT_MS,
  instanceAddress,
  instanceTimeoutMs,
  newInstanceId,
} from "../infra/instances";
import { getMetrics } from "../infra/metrics";
import { dropProcessSingleton, processSingleton } from "../infra/process-singletons";
import { processTelemetry } from "../infra/telemetry-setup";
import { SOURCE_PLUGINS } from "../modules";
import type { SourceContext, SourceParts, SourcePlugin } from "../modules/plugin";
import { auditCheckpointsFor } from "../services/audit-anchor";
import { createCapabilityCategoryLookup } from "../services/capability-categories";
import { taskLifecycle } from "../services/mcp-tasks";
import { type Notifier, type NotifierConfig, startNotifier } from "../services/notifications/notifier";
import { getPythonRuntime } from "../services/python-runtime";
import { engineMetricsSource, meteredPorts } from "./engine-metrics";
import { startInstance } from "./maintenance";

export { ACTION_CONTRACT, renderModuleSignatures } from "../core/actions/contract";
export { createPrismaPorts } from "../infra/engine-ports";

type Registered = (typeof SOURCE_PLUGINS)[number];

/** Each registered plug-in's parts by its id: `engine.sources.mcp.source`, `engine.sources.skills.store`. */
export type SourceInstances = {
  [P in Registered as P["id"]]: ReturnType<P["create"]>;
};

export interface ServerEngine extends Engine {
  instanceId: string;
  /** What each source plug-in built (its connections, its store). */
  sources: SourceInstances;
  /** The registered plug-ins, for the category-review flow and the start-time folder loads. */
  plugins: readonly SourcePlugin[];
  /** Sends approval notifications (push, webhooks, email) from the queue; null when off. */
  notifier: Notifier | null;
  /** Stop the maintenance timers, the sources and the sandbox workers (tests, shutdown). */
  shutdown(): Promise<void>;
}

export interface ServerEngineOptions {
  db: Db;
  /** The audit log's signed checkpoints (server/services/audit-anchor.ts); flushed at shutdown. */
  auditCheckpoints?: AuditCheckpointWriter | null;
  ports?: EnginePorts;
  instanceId?: string;
  httpAllowedHosts?: string[];
  actionTimeoutMs?: number;
  approvalTtlMs?: number;
  /** Ms a call waiting for a human keeps its sandbox before the run parks (TOOLSTORE_PARK_AFTER_MS). */
  parkAfterMs?: number;
  /** Waits that keep their sandbox at once; a burst parks the oldest beyond (TOOLSTORE_MAX_HOT_WAITS). */
  maxHotWaits?: number;
  /** Sandbox pool sizing and fair share (server/core/sandbox/pool.ts). */
  workers?: number;
  maxRunsPerKey?: number;
  queueTimeoutMs?: number;
  /** Where toolsets' declared hosts are really sent (TOOLSTORE_EGRESS_ALIASES). */
  hostAliases?: Readonly<Record<string, string>>;
  /** More fixed modules (tests, canaries), beside the built-ins. */
  extraModules?: ModuleFactory[];
  /** More module sources, beside the plug-ins' (tests). */
  extraSources?: ModuleSource[];
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
  /** Start the notifier (server/services/notifications) beside the engine; none: no notifications. */
  notifications?: NotifierConfig;
}

/** What the plug-ins built, gathered into the engine's seams. */
interface BuiltSources {
  instances: SourceInstances;
  modules: ModuleFactory[];
  moduleSources: ModuleSource[];
  catalogSources: CatalogSource[];
  libraries: LibraryModule[];
  /** Kinds of the plug-ins with module sources: they write their own Capability rows. */
  ownRows: ReadonlySet<string>;
  close(): Promise<void>;
}

function buildSources(context: SourceContext): BuiltSources {
  const entries = SOURCE_PLUGINS.map((plugin) => [plugin.id, plugin.create(context)] as const);
  const parts: SourceParts[] = entries.map(([, part]) => part);
  return {
    instances: Object.fromEntries(entries) as SourceInstances,
    modules: parts.flatMap((p) => p.modules ?? []),
    moduleSources: parts.flatMap((p) => p.moduleSources ?? []),
    catalogSources: parts.flatMap((p) => p.catalogSources ?? []),
    libraries: parts.flatMap((p) => p.libraries ?? []),
    ownRows: new Set(SOURCE_PLUGINS.filter((_, i) => parts[i]?.moduleSources?.length).map((p) => p.kind)),
    async close() {
      await Promise.allSettled(parts.map((p) => p.close?.()));
    },
  };
}

function poolFor(options: ServerEngineOptions): SandboxPool {
  return createSandboxPool({
    ...(options.workers ? { workers: options.workers } : {}),
    ...(options.maxRunsPerKey ? { maxRunsPerKey: options.maxRunsPerKey } : {}),
    ...(options.queueTimeoutMs ? { queueTimeoutMs: options.queueTimeoutMs } : {}),
    ...(options.hostAliases ? { hostAliases: options.hostAliases } : {}),
  });
}

/** Builds and starts an engine over a database (getEngine() uses it with the process's settings). */
export async function startServerEngine(options: ServerEngineOptions): Promise<ServerEngine> {
  const { db, channel } = options;
  const instanceId = options.instanceId ?? newInstanceId();
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const alive = createLivenessCheck(db, instanceTimeoutMs(heartbeatMs));
  const pool = poolFor(options);
  const python = options.python ?? createPythonRuntime();
  const runtimes: BindingRuntimes = { typescript: pool, python };
  const ports = meteredPorts(options.ports ?? createPrismaPorts(db, channel));
  let engineRef: Engine | undefined;
  const sources = buildSources({
    db,
    assets: ports.assets,
    pool,
    python,
    runtimes,
    ...(options.actionTimeoutMs ? { actionTimeoutMs: options.actionTimeoutMs } : {}),
    // Nested actions (skill scripts) import what the registry mounts for their session.
    async mountedModules(session: Session) {
      if (!engineRef) throw new Error("engine not ready");
      const mounted = await engineRef.registry.mountedModules(session);
      return Object.fromEntries(mounted.map((m) => [m.name, m.exports.map((e) => e.exportName)]));
    },
  });
  const engine = createEngine({
    ports,
    instanceId,
    isInstanceAlive: alive,
    pool,
    modules: [
      builtinModules({ http: { allowedHosts: options.httpAllowedHosts ?? [] } }),
      ...sources.modules,
      ...(options.extraModules ?? []),
    ],
    sources: [...sources.moduleSources, ...(options.extraSources ?? [])],
    catalogSources: sources.catalogSources,
    libraries: sources.libraries,
    categories: createCapabilityCategoryLookup(db),
    ...(options.actionTimeoutMs ? { limits: { deadlineMs: options.actionTimeoutMs } } : {}),
    ...(options.approvalTtlMs ? { approvalTtlMs: options.approvalTtlMs } : {}),
    ...(options.approvalPollMs ? { approvalPollMs: options.approvalPollMs } : {}),
    ...(options.cancelPollMs ? { cancelPollMs: options.cancelPollMs } : {}),
    ...(options.parkAfterMs === undefined ? {} : { parkAfterMs: options.parkAfterMs }),
    ...(options.maxHotWaits === undefined ? {} : { maxHotWaits: options.maxHotWaits }),
    lifecycle: taskLifecycle(db),
  });
  engineRef = engine;
  const unmeter = engineMetricsSource(db, pool);
  if (options.auditCheckpoints) auditLogFor(db, { checkpoints: options.auditCheckpoints });
  const instance = await startInstance({
    db,
    engine,
    instanceId,
    alive,
    heartbeatMs,
    address: options.address ?? null,
    ...(channel ? { channel } : {}),
    ownRows: sources.ownRows,
  });
  const notifier = options.notifications
    ? await startNotifier(db, instanceId, {
        ...options.notifications,
        onOutcome: (kind, ok) => {
          options.notifications?.onOutcome?.(kind, ok);
          getMetrics().countDelivery(kind, ok);
        },
      })
    : null;
  return {
    ...engine,
    instanceId,
    sources: sources.instances,
    plugins: SOURCE_PLUGINS,
    notifier,
    async shutdown() {
      unmeter();
      instance.stop();
      await notifier?.stop();
      // engine.close() closes the module sources; the plug-ins' own close is for the rest.
      await engine.close();
      await sources.close();
      if (options.python === undefined) await python.close().catch(() => undefined);
      await pool.close();
      await instance.forget();
      options.auditCheckpoints?.flush();
    },
  };
}

const ENGINE = "engine";

/** The process's engine, started on first use with the settings from server/env.ts. */
export function getEngine(): Promise<ServerEngine> {
  const started = processSingleton(ENGINE, () => {
    const env = loadEnv();
    processTelemetry(env);
    return startServerEngine({
      db: getDb(),
      auditCheckpoints: auditCheckpointsFor(getDb()),
      httpAllowedHosts: env.TOOLSTORE_HTTP_ALLOWED_HOSTS,
      actionTimeoutMs: env.TOOLSTORE_ACTION_TIMEOUT_MS,
      approvalTtlMs: Math.round(env.TOOLSTORE_APPROVAL_TTL_MINUTES * 60_000),
      parkAfterMs: env.TOOLSTORE_PARK_AFTER_MS,
      maxHotWaits: env.TOOLSTORE_MAX_HOT_WAITS,
      address: instanceAddress(env.HOST, env.PORT),
      heartbeatMs: env.TOOLSTORE_HEARTBEAT_MS,
      channel: processChannel(dbTarget()),
      ...(env.TOOLSTORE_SANDBOX_WORKERS ? { workers: env.TOOLSTORE_SANDBOX_WORKERS } : {}),
      maxRunsPerKey: env.TOOLSTORE_SANDBOX_RUNS_PER_KEY,
      queueTimeoutMs: env.TOOLSTORE_SANDBOX_QUEUE_TIMEOUT_MS,
      hostAliases: env.TOOLSTORE_EGRESS_ALIASES,
      python: getPythonRuntime(),
      ...(env.TOOLSTORE_NOTIFICATIONS === "on"
        ? {
            notifications: {
              publicUrl: publicUrl(env),
              smtpUrl: env.TOOLSTORE_SMTP_URL ?? null,
              smtpFrom: env.TOOLSTORE_SMTP_FROM,
            },
          }
        : {}),
    });
  });
  started.catch(() => dropProcessSingleton(ENGINE, started));
  return started;
}
