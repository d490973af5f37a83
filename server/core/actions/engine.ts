/**
 * createEngine — composes the core from ports: registry (the modules and module sources it is
 * handed), gate with approvals, sandbox pool, action runner, recovery. It names no module: the
 * composition root (server/engine) passes the built-ins and every source; tests pass
 * in-memory ports and the modules they need (server/core/testing).
 */
import { createRegistryCatalog } from "../capabilities/catalog";
import type {
  AssetStore,
  CatalogSource,
  CategoryLookup,
  ModuleFactory,
  ModuleSource,
  ToolsetCatalog,
} from "../capabilities/ports";
import { type CapabilityRegistry, createCapabilityRegistry } from "../capabilities/registry";
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
import { createLibraryTable, type LibraryTable } from "../libraries/library-table";
import type { LibraryModule } from "../libraries/types";
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
  /**
   * Fixed modules (built-ins, `toolstore/skills`, test canaries), built once with the engine's
   * catalog and asset store. Validated at construction: a bad one throws.
   */
  modules: ModuleFactory[];
  /** Library modules (`toolstore/lib/<name>`): pure, run in the guest, no run context. */
  libraries?: LibraryModule[];
  /** Modules whose set changes at run time (toolsets, MCP servers). Closed by close(). */
  sources?: ModuleSource[];
  /** Entries of `store.list`/`search`/`info` beside the registry's modules (skills). */
  catalogSources?: CatalogSource[];
  /** Effective categories from the database. */
  categories?: CategoryLookup;
  /** Catalog for `toolstore/store`; default: the registry's modules plus `catalogSources`. */
  catalog?: ToolsetCatalog;
  /** A pool to share; otherwise one is created with `poolOptions` (and closed by close()). */
  pool?: SandboxPool;
  poolOptions?: SandboxPoolOptions;
  limits?: Partial<SandboxLimits>;
  approvalTtlMs?: number;
  approvalPollMs?: number;
  registryCacheMs?: number;
  cancelPollMs?: number;
  /**
   * Whether another server process still runs (heartbeats). Used by recovery and by approval
   * decisions (a request whose run died is refused). Default: no other instance is alive.
   */
  isInstanceAlive?: (instanceId: string) => Promise<boolean> | boolean;
}

export interface Engine extends ActionRunner {
  registry: CapabilityRegistry;
  /** The library modules, apart from the registry: they have no category and no gate. */
  libraries: LibraryTable;
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
  /**
   * Cancels a run wherever it runs: the request is stored (the instance running it sees it by
   * its poll or a push), a run of this process is aborted at once, and the run's pending
   * approvals expire at once. False when the run is not running.
   */
  cancel(runId: string, reason?: string): Promise<boolean>;
  /** Commits the run rows and read-call records still queued for a group commit. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const CANCELLED_REASON = "the action was cancelled before it was approved";

export function createEngine(options: EngineOptions): Engine {
  const { ports } = options;
  let registry: CapabilityRegistry | undefined;
  const catalog =
    options.catalog ??
    createRegistryCatalog(() => {
      if (!registry) throw new Error("registry not ready");
      return registry;
    }, options.catalogSources);
  const context = { catalog, assets: ports.assets };
  registry = createCapabilityRegistry({
    builtins: options.modules.flatMap((factory) => factory(context)),
    ...(options.sources ? { sources: options.sources } : {}),
    ...(options.categories ? { categories: options.categories } : {}),
    ...(options.registryCacheMs === undefined ? {} : { cacheMs: options.registryCacheMs }),
  });
  const instanceAlive = async (instanceId: string) =>
    instanceId === options.instanceId ||
    (options.isInstanceAlive ? await options.isInstanceAlive(instanceId) : false);
  const approvals = createApprovalService({
    isRunAlive: async (runId) => {
      const run = await ports.runs.get(runId);
      return run !== null && run.status === "running" && (await instanceAlive(run.instanceId));
    },
    store: ports.approvals,
    grants: ports.grants,
    events: ports.events,
    clock: ports.clock,
    ...(options.approvalTtlMs === undefined ? {} : { ttlMs: options.approvalTtlMs }),
    ...(options.approvalPollMs === undefined ? {} : { pollMs: options.approvalPollMs }),
  });
  const gate = createGate({ rules: ports.rules, grants: ports.grants, approvals, clock: ports.clock });
  const libraries = createLibraryTable(options.libraries ?? []);
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
    libraries,
    instanceId: options.instanceId,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.cancelPollMs === undefined ? {} : { cancelPollMs: options.cancelPollMs }),
  });
  return {
    ...runner,
    registry,
    libraries,
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
        isInstanceAlive: isInstanceAlive ?? instanceAlive,
      }),
    async cancel(runId, reason = CANCELLED_REASON) {
      // A run started moments ago may have its row still queued.
      await ports.runs.flush();
      const requested = await ports.runs.requestCancel(runId, ports.clock.now());
      runner.abortLocal(runId, "the run was cancelled");
      if (requested) await approvals.expireForRun(runId, reason);
      return requested;
    },
    flush: () => ports.runs.flush(),
    async close() {
      await Promise.allSettled((options.sources ?? []).map((s) => s.close?.()));
      await ports.runs.flush();
      if (ownPool) await pool.close();
    },
  };
}
