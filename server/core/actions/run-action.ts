/**
 * actions.run — the one entry for every surface (playground, MCP execute_code, CLI):
 *   record the run -> static import check (refused: nothing runs) -> sandbox pool -> every host
 *   call through run.invoke -> observation envelope -> record the finished run.
 * Runs are durable: every call is journaled; a call that waits for a human keeps the sandbox for a
 * short hot window, then the run parks (a row, nothing in memory); after the answer, whichever
 * instance takes the run's lease runs the action again from the start, answering the journaled
 * calls from the journal (a replay), and the surface that started it gets the result if it is
 * still here. Also the direct-call entry (`invoke`) used by a console "try this capability"
 * button and tests: the same run.invoke, without the sandbox.
 */
import { randomUUID } from "node:crypto";
import { createEngineRun, type EngineRun, type InvokeDeps } from "../capabilities/invoke";
import { sha256Hex } from "../capabilities/snapshot";
import type { ClientToolRouter, JsonValue, Session } from "../capabilities/types";
import type { EngineEvent } from "../gate/ports";
import type { PlanGrant } from "../gate/trials";
import type { LibraryTable } from "../libraries/library-table";
import { randomHex } from "../random-hex";
import { resolveLimits, type SandboxLimits } from "../sandbox/limits";
import type { SandboxPool } from "../sandbox/pool";
import { type AttemptOutcome, type AttemptPlan, runAttempt } from "./attempt";
import type { ObservationEnvelope } from "./envelope";
import { createHotWindow } from "./hot-window";
import { createLocalRuns } from "./local-runs";
import type { RunContext, RunStore, StoredRun } from "./ports";
import { createRunSurfaces } from "./run-surfaces";
import { DEFAULT_MAX_CODE_CHARS } from "./static-check";

/** Default hot window: a quick Allow (the playground) keeps the live sandbox. */
export const DEFAULT_PARK_AFTER_MS = 3000;

export interface ActionRunnerDeps extends InvokeDeps {
  pool: SandboxPool;
  runs: RunStore;
  /** Id of this server process (recovery expires approvals of runs whose instance is gone). */
  instanceId: string;
  newId?: () => string;
  /** Defaults for actions (under the ceilings). */
  limits?: Partial<SandboxLimits>;
  maxCodeChars?: number;
  /** Library modules beside the registry's capability modules. */
  libraries?: LibraryTable;
  /**
   * How often, while runs are active here, the run store is asked whether someone (maybe on
   * another instance) requested a cancel. A push channel calls `checkCancels()` sooner.
   */
  cancelPollMs?: number;
  /** Ms a call waiting for a human keeps its sandbox before the run parks; Infinity: never park. */
  parkAfterMs?: number;
  /** Calls waiting for a human that keep their sandbox at once; the oldest beyond park (default 64). */
  maxHotWaits?: number;
  /** How often a surface waiting for a run another instance finishes looks at the store. */
  finishPollMs?: number;
  /** Whether another instance is alive (a parked run of a dead one may be taken over). */
  isInstanceAlive?: (instanceId: string) => Promise<boolean> | boolean;
  /** Told when a run parks, resumes and finishes, on whichever instance (MCP tasks follow it). */
  lifecycle?: RunLifecycle;
  /**
   * Whether an approval is no longer pending. A decision taken while its run was parking finds
   * the run still running and cannot resume it; the run looks once it is parked.
   */
  approvalAnswered?: (approvalId: string) => Promise<boolean>;
}

/** Which run, and which instance owns it now. */
export type RunRef = Pick<StoredRun, "id" | "mcpRequestId" | "instanceId">;

export interface RunLifecycle {
  parked?(run: RunRef, approvalId: string): void | Promise<void>;
  resumed?(run: RunRef): void | Promise<void>;
  finished?(run: RunRef, envelope: ObservationEnvelope): void | Promise<void>;
}

export interface RunActionInput {
  code: string;
  session: Session;
  title?: string;
  /** JSON value handed to the default export. */
  input?: JsonValue;
  /** Per-run limits, each under its ceiling (BAD_INPUT otherwise). */
  limits?: Partial<SandboxLimits>;
  /** Live events of this run (decisions, approvals, start/finish) for the surface's timeline. */
  onEvent?: (event: EngineEvent) => void;
  /** Cancels the run (e.g. the client went away); pending approvals of the run expire. */
  signal?: AbortSignal;
  /** JSON-RPC id of the MCP request, so a notifications/cancelled on any instance finds the run. */
  mcpRequestId?: string;
  /** An approved plan (plan-run.ts): answers the asks for exactly its calls, in this run. */
  plan?: PlanGrant;
  /** The surface's connected client (a playground tab, an MCP client) for `toolstore/ui`. */
  client?: ClientToolRouter;
  /**
   * The caller does not wait while the run is parked: the run's promise settles as soon as it
   * parks (with `parked`), and nothing of the caller stays in memory. Its result then reaches the
   * caller through the lifecycle (an MCP task follows its run on any instance).
   */
  detachOnPark?: boolean;
}

export interface ActionRunResult {
  runId: string;
  /** The run's envelope; for a detached caller whose run parked, one that only says so. */
  envelope: ObservationEnvelope;
  /** Set when the run parked and the caller asked not to wait (`detachOnPark`). */
  parked?: { approvalId: string };
}

export interface DirectInvokeInput {
  session: Session;
  name: string;
  args: unknown;
  onEvent?: (event: EngineEvent) => void;
  signal?: AbortSignal;
  /** The console tab that makes the call, for `toolstore/ui`. */
  client?: ClientToolRouter;
}

export interface ActionRunner {
  run(input: RunActionInput): Promise<ActionRunResult>;
  /** A direct call through run.invoke (no sandbox). Throws the AppError the gate or impl raised. */
  invoke(input: DirectInvokeInput): Promise<{ value: unknown; run: EngineRun }>;
  /** A run context for several direct calls sharing one run id (tests, helpers). */
  createDirectRun(input: Omit<DirectInvokeInput, "name" | "args">): EngineRun;
  /** Aborts a run if it runs in this process; false otherwise. */
  abortLocal(runId: string, reason: string): boolean;
  /** Aborts the local runs someone asked (through the run store) to cancel. */
  checkCancels(): Promise<void>;
  /**
   * Takes a run over and runs it again from its journal: a parked run whose approval was
   * answered, or a run whose instance died (`from` running/queued). False when someone else has it.
   */
  resume(runId: string, options?: { from?: StoredRun["status"][] }): Promise<boolean>;
  /** Resumes the parked runs that are ready (their approval answered or expired) and this instance may take. */
  resumeDue(): Promise<number>;
  /** Ends a parked run as cancelled; false when it was not parked. */
  cancelParked(runId: string, reason: string): Promise<boolean>;
  /** Attempts in flight here (tests wait for them). */
  settled(): Promise<void>;
}

const RESUME_BATCH = 100;
/** A run the process died under this many times is not replayed again (it may be what kills it). */
const MAX_CRASH_REPLAYS = 5;

/**
 * Whether another instance may take the run over and replay it, once its owner is gone: it has a
 * journal to replay from (rows from before durable runs have none) and has not been replayed too often.
 */
export function canTakeOver(stored: StoredRun): stored is StoredRun & { context: RunContext } {
  return stored.context !== null && (stored.status === "waiting" || stored.replays < MAX_CRASH_REPLAYS);
}

/** The answer came while the run was parking: it resumes now, not at the next sweep. */
function resumeIfAnswered(
  deps: ActionRunnerDeps,
  resume: (runId: string) => Promise<boolean>,
  runId: string,
  approvalId: string,
): void {
  const answered = deps.approvalAnswered?.(approvalId) ?? Promise.resolve(false);
  void answered.then((yes) => (yes ? resume(runId) : false)).catch(() => false);
}

/** Resumes the answered parked runs that are this instance's, or whose owner is gone; how many. */
async function resumeDueRuns(
  deps: ActionRunnerDeps,
  resume: (runId: string) => Promise<boolean>,
): Promise<number> {
  let resumed = 0;
  for (const candidate of await deps.runs.listResumable(RESUME_BATCH)) {
    const mine =
      candidate.instanceId === deps.instanceId || !(await deps.isInstanceAlive?.(candidate.instanceId));
    if (mine && (await resume(candidate.id).catch(() => false))) resumed += 1;
  }
  return resumed;
}

export function createActionRunner(deps: ActionRunnerDeps): ActionRunner {
  const newId = deps.newId ?? randomUUID;
  const baseLimits = resolveLimits(deps.limits);
  const maxCodeChars = deps.maxCodeChars ?? DEFAULT_MAX_CODE_CHARS;
  const local = createLocalRuns(deps.runs, deps.cancelPollMs);
  const surfaces = createRunSurfaces(deps.runs, deps.finishPollMs);
  const attempts = new Set<Promise<unknown>>();
  const attemptDeps = {
    ...deps,
    maxCodeChars,
    hot: createHotWindow({
      parkAfterMs: deps.parkAfterMs ?? DEFAULT_PARK_AFTER_MS,
      ...(deps.maxHotWaits === undefined ? {} : { maxHot: deps.maxHotWaits }),
    }),
    local,
    surfaces,
  };

  /** Runs one attempt and hands its outcome to the run's surface (when it waits here). */
  function start(plan: AttemptPlan): Promise<AttemptOutcome> {
    const running = runAttempt(attemptDeps, plan).then(
      (outcome) => {
        if (outcome.kind === "finished") surfaces.resolve(plan.runId, outcome.result);
        if (outcome.kind === "parked") resumeIfAnswered(deps, resume, plan.runId, outcome.approvalId);
        return outcome;
      },
      (error: unknown) => {
        surfaces.reject(plan.runId, error);
        throw error;
      },
    );
    attempts.add(running);
    void running.finally(() => attempts.delete(running)).catch(() => undefined);
    return running;
  }

  async function run(input: RunActionInput): Promise<ActionRunResult> {
    const limits = resolveLimits(input.limits, baseLimits);
    const runId = newId();
    const startedAt = deps.clock.now();
    const seed = randomHex(16);
    const inputJson = input.input === undefined ? null : JSON.stringify(input.input);
    const result = surfaces.add(runId, {
      onEvent: input.onEvent,
      signal: input.signal,
      cancelParked: (reason) => cancelParked(runId, reason),
      client: input.client,
      detachOnPark: input.detachOnPark,
    });
    void start({
      runId,
      code: input.code,
      inputJson,
      session: input.session,
      limits,
      seed,
      token: 0,
      entries: [],
      replay: 0,
      startedAt,
      title: input.title ?? "",
      create: {
        mcpRequestId: input.mcpRequestId ?? null,
        codeHash: sha256Hex(input.code),
      },
      ...(input.plan ? { grant: input.plan } : {}),
    }).catch(() => undefined);
    return result;
  }

  function resume(runId: string, options: { from?: StoredRun["status"][] } = {}): Promise<boolean> {
    const resuming = takeOver(runId, options.from ?? ["waiting"]);
    attempts.add(resuming);
    void resuming.finally(() => attempts.delete(resuming)).catch(() => undefined);
    return resuming;
  }

  async function takeOver(runId: string, from: StoredRun["status"][]): Promise<boolean> {
    const stored = await deps.runs.load(runId);
    if (!stored || !from.includes(stored.status) || !canTakeOver(stored)) return false;
    if (stored.instanceId !== deps.instanceId && (await deps.isInstanceAlive?.(stored.instanceId))) {
      return false;
    }
    const token = await deps.runs.claim(runId, {
      instanceId: deps.instanceId,
      fromToken: stored.leaseToken,
      from,
    });
    if (token === null) return false;
    const entries = await deps.runs.journal(runId);
    const replay = stored.replays + 1;
    await deps.lifecycle?.resumed?.({ ...stored, instanceId: deps.instanceId });
    void start({
      runId,
      code: stored.code,
      inputJson: stored.inputJson,
      session: stored.context.session,
      limits: resolveLimits(stored.context.limits, baseLimits),
      seed: stored.seed,
      token,
      entries,
      replay,
      startedAt: stored.startedAt,
      title: stored.title,
      stored: { ...stored, leaseToken: token, replays: replay },
    }).catch(() => undefined);
    return true;
  }

  const cancelParked = (runId: string, reason: string) => cancelParkedRun(deps, surfaces, runId, reason);

  function createDirectRun(input: Omit<DirectInvokeInput, "name" | "args">): EngineRun {
    return createEngineRun(deps, {
      runId: newId(),
      session: input.session,
      signal: input.signal ?? new AbortController().signal,
      sandboxed: false,
      ...(input.onEvent ? { emit: input.onEvent } : {}),
      ...(input.client ? { client: input.client } : {}),
    });
  }

  return {
    run,
    createDirectRun,
    abortLocal: local.abortLocal,
    checkCancels: local.checkCancels,
    resume,
    resumeDue: () => resumeDueRuns(deps, resume),
    cancelParked,
    async settled() {
      while (attempts.size > 0) await Promise.allSettled([...attempts]);
    },
    async invoke(input) {
      const engineRun = createDirectRun(input);
      const value = await engineRun.invoke(input.name, input.args);
      return { value, run: engineRun };
    },
  };
}

/** Ends a parked run as cancelled (its surface gets the envelope); false when it was not parked. */
async function cancelParkedRun(
  deps: ActionRunnerDeps,
  surfaces: ReturnType<typeof createRunSurfaces>,
  runId: string,
  reason: string,
): Promise<boolean> {
  const stored = await deps.runs.load(runId);
  if (stored?.status !== "waiting") return false;
  const finishedAt = deps.clock.now();
  const envelope: ObservationEnvelope = {
    ok: false,
    error: { kind: "cancelled", message: `cancelled: ${reason}` },
    logs: [],
    calls: [],
    images: [],
    durationMs: finishedAt - stored.startedAt,
  };
  const done = await deps.runs.finish(
    runId,
    { status: "error", errorKind: "cancelled", envelope, durationMs: envelope.durationMs, finishedAt },
    stored.leaseToken,
  );
  if (done) {
    surfaces.resolve(runId, { runId, envelope });
    await deps.lifecycle?.finished?.(stored, envelope);
  }
  return done;
}
