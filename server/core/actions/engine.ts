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
import { AppError } from "../errors";
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
import type { BudgetStore, ShadowSink } from "../gate/trials";
import { createLibraryTable, type LibraryTable } from "../libraries/library-table";
import type { LibraryModule } from "../libraries/types";
import type { SandboxLimits } from "../sandbox/limits";
import { createSandboxPool, type SandboxPool, type SandboxPoolOptions } from "../sandbox/pool";
import { type PlanRunResult, type PlanStore, planToStore, type RunPlanInput, runPlan } from "./plan-run";
import { isUnfinished, type RunStore } from "./ports";
import { recoverAfterRestart } from "./recover";
import { type ActionRunner, canTakeOver, createActionRunner, type RunLifecycle } from "./run-action";

export interface EnginePorts {
  rules: RuleSource;
  grants: GrantStore;
  approvals: ApprovalStore;
  decisions: DecisionSink;
  events: EventPublisher;
  runs: RunStore;
  assets: AssetStore;
  clock: Clock;
  /** Plans of plan-mode runs, budget counters and shadow hits (#27); without them those features are off. */
  plans?: PlanStore;
  budgets?: BudgetStore;
  shadows?: ShadowSink;
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
  /** Ms a call waiting for a human keeps its sandbox before the run parks (default 3 s; Infinity: never). */
  parkAfterMs?: number;
  /** Waits that keep their sandbox at once; a burst parks the oldest beyond (default 64). */
  maxHotWaits?: number;
  /** Told when a run parks, resumes and finishes (MCP tasks follow their runs). */
  lifecycle?: RunLifecycle;
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
  /** Asks a human for a stored plan as a whole, then runs it with exactly its calls granted. */
  runPlan(input: RunPlanInput): Promise<PlanRunResult>;
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
  let runner: ActionRunner | undefined;
  const approvals = createApprovalService({
    isRunAlive: async (runId) => {
      const run = await ports.runs.load(runId);
      // A parked run is a row: any instance resumes it once answered.
      if (run?.status === "waiting") return true;
      if (run?.status !== "running") return false;
      // A run whose instance died lives on while recovery can take it over: its replay waits on
      // the same request, so an answer given meanwhile is used, not refused as "the action ended".
      return (await instanceAlive(run.instanceId)) || canTakeOver(run);
    },
    onDecided: (record) => {
      if (record.runId) void runner?.resume(record.runId).catch(() => false);
    },
    store: ports.approvals,
    grants: ports.grants,
    events: ports.events,
    clock: ports.clock,
    ...(options.approvalTtlMs === undefined ? {} : { ttlMs: options.approvalTtlMs }),
    ...(options.approvalPollMs === undefined ? {} : { pollMs: options.approvalPollMs }),
  });
  const gate = createGate({
    rules: ports.rules,
    grants: ports.grants,
    approvals,
    clock: ports.clock,
    ...(ports.budgets ? { budgets: ports.budgets } : {}),
    ...(ports.shadows ? { shadows: ports.shadows } : {}),
  });
  const libraries = createLibraryTable(options.libraries ?? []);
  const ownPool = options.pool === undefined;
  const pool = options.pool ?? createSandboxPool(options.poolOptions);
  runner = createActionRunner({
    registry,
    gate,
    decisions: ports.decisions,
    events: ports.events,
    clock: ports.clock,
    pool,
    runs: ports.runs,
    libraries,
    instanceId: options.instanceId,
    isInstanceAlive: instanceAlive,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.cancelPollMs === undefined ? {} : { cancelPollMs: options.cancelPollMs }),
    ...(options.parkAfterMs === undefined ? {} : { parkAfterMs: options.parkAfterMs }),
    ...(options.maxHotWaits === undefined ? {} : { maxHotWaits: options.maxHotWaits }),
    lifecycle: {
      ...options.lifecycle,
      async finished(ref, envelope) {
        // A parked run whose client went away is cancelled: nothing will use its requests.
        if (envelope.error?.kind === "cancelled")
          await approvals.expireForRun(ref.id, CANCELLED_REASON).catch(() => 0);
        await options.lifecycle?.finished?.(ref, envelope);
      },
    },
    approvalAnswered: async (approvalId) => {
      const record = await ports.approvals.get(approvalId);
      return record !== null && record.status !== "pending";
    },
  });
  const actions = runner;
  const plans = ports.plans;
  /** A plan-mode run that planned calls leaves its plan stored before its envelope goes back. */
  const run: ActionRunner["run"] = async (input) => {
    const result = await actions.run(input);
    const plan = result.envelope.plan;
    if (plans && plan && plan.calls.length > 0)
      await plans.save(planToStore(plan, input.session, input.code));
    return result;
  };
  return {
    ...actions,
    run,
    runPlan(input) {
      if (!plans) throw new AppError("INTERNAL", "this engine stores no plans");
      return runPlan({ plans, approvals, run }, input);
    },
    registry,
    libraries,
    gate,
    approvals,
    pool,
    recover: (isInstanceAlive, recoverOptions) =>
      recoverAfterRestart({
        runs: ports.runs,
        approvals,
        resume: (runId) => actions.resume(runId, { from: ["running", "queued"] }),
        clock: ports.clock,
        instanceId: options.instanceId,
        startup: recoverOptions?.startup ?? true,
        isInstanceAlive: isInstanceAlive ?? instanceAlive,
      }),
    async cancel(runId, reason = CANCELLED_REASON) {
      // A run started moments ago may have its row still queued.
      await ports.runs.flush();
      // Each step is a compare-and-set on one status, and a run moves between them while we ask
      // (it parks after its hot window, or resumes): ask again while it is still unfinished.
      let requested = false;
      let ended = false;
      for (let attempt = 0; attempt < 3 && !requested && !ended; attempt++) {
        requested =
          (await actions.cancelParked(runId, "the run was cancelled")) ||
          (await ports.runs.requestCancel(runId, ports.clock.now()));
        if (!requested) ended = !isUnfinished((await ports.runs.load(runId))?.status);
      }
      actions.abortLocal(runId, "the run was cancelled");
      // A run that ended meanwhile (its own client's cancel won the race) will never use them either.
      if (requested || ended) await approvals.expireForRun(runId, reason);
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
