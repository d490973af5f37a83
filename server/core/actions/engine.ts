/**
 * createEngine — composes the core from ports: registry (built-ins + sources), gate with
 * approvals, sandbox pool, action runner, recovery. The services layer calls it with Prisma-backed
 * ports (server/services/engine); tests call it with in-memory ports (server/core/testing).
 */
import { createBuiltinModules } from "../capabilities/builtins";
import type { HttpModuleOptions } from "../capabilities/builtins/http";
import { createRegistryCatalog } from "../capabilities/catalog";
import type { AssetStore, CategoryLookup, ModuleSource, ToolsetCatalog } from "../capabilities/ports";
import { type CapabilityRegistry, createCapabilityRegistry } from "../capabilities/registry";
import type { CapabilityModule } from "../capabilities/types";
import { type ApprovalService, createApprovalService } from "../gate/approvals";
import { createGate, type Gate } from "../gate/gate";
import type {
  ApprovalStore,
  Clock,
  DecisionSink,
  EventPublisher,
  GrantStore,
  RuleSource,
} from "../gate/ports";
import type { SandboxLimits } from "../sandbox/limits";
import { createSandboxPool, type SandboxPool, type SandboxPoolOptions } from "../sandbox/pool";
import type { RunStore } from "./ports";
import { recoverAfterRestart } from "./recover";
import { type ActionRunner, createActionRunner } from "./run-action";

export interface EnginePorts {
  rules: RuleSource;
  grants: GrantStore;
  approvals: ApprovalStore;
  decisions: DecisionSink;
  events: EventPublisher;
  runs: RunStore;
  assets: AssetStore;
  clock: Clock;
}

export interface EngineOptions {
  ports: EnginePorts;
  instanceId: string;
  /** Module sources besides the built-ins (toolsets in the database, MCP servers). More via registry.addSource. */
  sources?: ModuleSource[];
  /** Effective categories from the database. */
  categories?: CategoryLookup;
  /** Catalog for `toolstore/store`; default: read from the registry (module.doc is the documentation). */
  catalog?: ToolsetCatalog;
  /** Extra modules (tests, canaries) registered like built-ins. */
  extraModules?: CapabilityModule[];
  http?: HttpModuleOptions;
  /** A pool to share; otherwise one is created with `poolOptions` (and closed by close()). */
  pool?: SandboxPool;
  poolOptions?: SandboxPoolOptions;
  limits?: Partial<SandboxLimits>;
  approvalTtlMs?: number;
  approvalPollMs?: number;
  registryCacheMs?: number;
}

export interface Engine extends ActionRunner {
  registry: CapabilityRegistry;
  gate: Gate;
  approvals: ApprovalService;
  pool: SandboxPool;
  /**
   * Close runs and expire approvals left over by processes that are gone: at startup (default)
   * and then periodically with `startup: false`.
   */
  recover(
    isInstanceAlive?: (instanceId: string) => Promise<boolean> | boolean,
    options?: { startup?: boolean },
  ): ReturnType<typeof recoverAfterRestart>;
  close(): Promise<void>;
}

export function createEngine(options: EngineOptions): Engine {
  const { ports } = options;
  let registry: CapabilityRegistry | undefined;
  const catalog =
    options.catalog ??
    createRegistryCatalog(() => {
      if (!registry) throw new Error("registry not ready");
      return registry;
    });
  registry = createCapabilityRegistry({
    builtins: [
      ...createBuiltinModules({ catalog, assets: ports.assets, http: options.http ?? { allowedHosts: [] } }),
      ...(options.extraModules ?? []),
    ],
    ...(options.sources ? { sources: options.sources } : {}),
    ...(options.categories ? { categories: options.categories } : {}),
    ...(options.registryCacheMs === undefined ? {} : { cacheMs: options.registryCacheMs }),
  });
  const approvals = createApprovalService({
    store: ports.approvals,
    grants: ports.grants,
    events: ports.events,
    clock: ports.clock,
    ...(options.approvalTtlMs === undefined ? {} : { ttlMs: options.approvalTtlMs }),
    ...(options.approvalPollMs === undefined ? {} : { pollMs: options.approvalPollMs }),
  });
  const gate = createGate({ rules: ports.rules, grants: ports.grants, approvals, clock: ports.clock });
  const ownPool = options.pool === undefined;
  const pool = options.pool ?? createSandboxPool(options.poolOptions);
  const runner = createActionRunner({
    registry,
    gate,
    decisions: ports.decisions,
    events: ports.events,
    clock: ports.clock,
    pool,
    runs: ports.runs,
    instanceId: options.instanceId,
    ...(options.limits ? { limits: options.limits } : {}),
  });
  return {
    ...runner,
    registry,
    gate,
    approvals,
    pool,
    recover: (isInstanceAlive, recoverOptions) =>
      recoverAfterRestart({
        runs: ports.runs,
        approvals,
        clock: ports.clock,
        instanceId: options.instanceId,
        startup: recoverOptions?.startup ?? true,
        ...(isInstanceAlive ? { isInstanceAlive } : {}),
      }),
    async close() {
      if (ownPool) await pool.close();
    },
  };
}
