/**
 * One attempt of a run: the first one, or a replay from the journal after a park or a takeover.
 * It runs the action in the sandbox with every call journaled, then ends in one of three ways:
 *   finished  the final row is written (only while this attempt holds the run's lease)
 *   parked    a call waits for a human: its calls in flight settle, the row becomes `waiting`
 *   lost      another instance took the run over: this attempt writes nothing more
 */
import { createEngineRun, type InvokeDeps } from "../capabilities/invoke";
import type { JournalEntry } from "../capabilities/journal";
import type { JsonValue, Session } from "../capabilities/types";
import { AppError } from "../errors";
import type { EngineEvent } from "../gate/ports";
import type { PlanGrant } from "../gate/trials";
import type { LibraryTable } from "../libraries/library-table";
import type { SandboxLimits } from "../sandbox/limits";
import type { HostCallControl, SandboxPool } from "../sandbox/pool";
import { traceRun } from "../trace-spans";
import { createAttemptJournal } from "./attempt-journal";
import { buildEnvelope, type ObservationEnvelope } from "./envelope";
import { executeAction } from "./execute-action";
import type { HotWindow } from "./hot-window";
import type { LocalRuns } from "./local-runs";
import type { RunStore, StoredRun } from "./ports";
import type { ActionRunResult, RunLifecycle, RunRef } from "./run-action";
import type { RunSurfaces } from "./run-surfaces";

/** Reason for the run's own signal; a plain object, so no DOMException is built per run. */
const RUN_ENDED = Object.freeze({ name: "RunEnded", message: "the run has ended" });

export interface AttemptDeps extends InvokeDeps {
  pool: SandboxPool;
  runs: RunStore;
  instanceId: string;
  maxCodeChars: number;
  hot: HotWindow;
  local: LocalRuns;
  surfaces: RunSurfaces;
  lifecycle?: RunLifecycle;
  libraries?: LibraryTable;
}

export interface AttemptPlan {
  runId: string;
  code: string;
  inputJson: string | null;
  session: Session;
  limits: SandboxLimits;
  seed: string;
  /** The lease token this attempt holds (0 for the first attempt). */
  token: number;
  entries: JournalEntry[];
  /** 0 for the first attempt, then 1, 2, ... */
  replay: number;
  startedAt: number;
  title: string;
  /** Only on the first attempt: the run row is created with it. */
  create?: { mcpRequestId: string | null; codeHash: string };
  /** The stored row a replay was loaded from. */
  stored?: StoredRun;
  /** An approved plan this run may use (first attempt only: a grant lives in this process). */
  grant?: PlanGrant;
}

export type AttemptOutcome =
  | { kind: "finished"; result: ActionRunResult }
  | { kind: "parked"; approvalId: string }
  | { kind: "lost" };

/** Tells the run's own surface first, then the shared feed (lazily: live information only). */
async function publish(
  deps: Pick<AttemptDeps, "events">,
  event: EngineEvent,
  local?: (event: EngineEvent) => void,
): Promise<void> {
  try {
    local?.(event);
  } catch {
    // A surface's listener must not break the run.
  }
  await deps.events.publish(event, { lazy: true });
}

/**
 * The run row and its first event. They may be written late: with the run's read-call decisions
 * and its envelope (one commit with a batching store), or before the first call or approval that
 * must be durable (`persisted`). The action does not wait for them.
 */
function recordStart(deps: AttemptDeps, plan: AttemptPlan, local?: (event: EngineEvent) => void) {
  const { session, runId } = plan;
  if (!plan.create) return Promise.resolve();
  const created = Promise.all([
    deps.runs.create({
      id: runId,
      sessionId: session.id,
      surface: session.surface,
      userId: session.userId || null,
      apiKeyId: session.apiKeyId ?? null,
      title: plan.title,
      code: plan.code,
      mode: session.mode,
      instanceId: deps.instanceId,
      startedAt: plan.startedAt,
      ...(plan.create.mcpRequestId ? { mcpRequestId: plan.create.mcpRequestId } : {}),
      codeHash: plan.create.codeHash,
      inputJson: plan.inputJson,
      context: { session, limits: plan.limits },
      seed: plan.seed,
    }),
    publish(
      deps,
      {
        type: "run.started",
        runId,
        sessionId: session.id,
        surface: session.surface,
        userId: session.userId,
        apiKeyId: session.apiKeyId ?? null,
        mode: session.mode,
        title: plan.title,
        at: plan.startedAt,
      },
      local,
    ),
  ]).then(() => undefined);
  created.catch(() => undefined);
  return created;
}

/** The guest clock readings of the journal, in call order (a replay serves them first). */
function journalClock(entries: JournalEntry[]): number[] {
  return [...entries].sort((a, b) => a.seq - b.seq).flatMap((e) => e.clock);
}

export async function runAttempt(deps: AttemptDeps, plan: AttemptPlan): Promise<AttemptOutcome> {
  const { runId, session } = plan;
  const surface = deps.surfaces.get(runId);
  const onEvent = surface?.onEvent;
  const created = recordStart(deps, plan, onEvent);
  if (plan.replay > 0) {
    // Lazy: it joins the attempt's next commit instead of holding the replay up for one.
    void publish(
      deps,
      {
        type: "run.resumed",
        runId,
        sessionId: session.id,
        replay: plan.replay,
        fromJournal: plan.entries.length,
        instanceId: deps.instanceId,
        at: deps.clock.now(),
      },
      onEvent,
    ).catch(() => undefined);
  }

  const traced = traceRun(runId, session);
  const ended = new AbortController();
  const onOuterAbort = () => ended.abort(surface?.signal?.reason);
  if (surface) surface.live = true;
  if (surface?.signal?.aborted) ended.abort(surface.signal.reason);
  surface?.signal?.addEventListener("abort", onOuterAbort, { once: true });
  deps.local.add(runId, ended);
  const controls = new Set<HostCallControl>();
  const journal = createAttemptJournal({
    runId,
    token: plan.token,
    entries: plan.entries,
    replaying: plan.replay > 0,
    runs: deps.runs,
    hot: deps.hot,
    stop: (reason) => ended.abort(reason),
  });
  const engineRun = createEngineRun(deps, {
    runId,
    session,
    signal: ended.signal,
    sandboxed: true,
    trace: traced.context,
    maxCalls: plan.limits.maxCalls,
    argsBytes: plan.limits.argsBytes,
    pauseDeadline: () => {
      const [control] = controls;
      return control ? control.suspendClock() : () => {};
    },
    persisted: async () => {
      await Promise.all([deps.runs.flush(), created]);
    },
    journal,
    ...(onEvent ? { emit: onEvent } : {}),
    ...(plan.grant ? { plan: plan.grant } : {}),
    ...(surface?.client ? { client: surface.client } : {}),
  });

  let envelope: ObservationEnvelope;
  try {
    envelope = await executeAction(deps, {
      runId,
      code: plan.code,
      session,
      input: plan.inputJson === null ? undefined : (JSON.parse(plan.inputJson) as JsonValue),
      limits: plan.limits,
      engineRun,
      controls,
      signal: ended.signal,
      startedAt: plan.startedAt,
      nondet: { seed: plan.seed, clock: journalClock(plan.entries) },
      trace: traced.context,
    });
  } catch (error) {
    envelope = buildEnvelope({
      error: { kind: "internal", message: `the engine failed: ${(error as Error).message}` },
      logs: [],
      calls: engineRun.calls,
      images: engineRun.images,
      durationMs: deps.clock.now() - plan.startedAt,
    });
  } finally {
    ended.abort(RUN_ENDED);
    deps.local.remove(runId);
    surface?.signal?.removeEventListener("abort", onOuterAbort);
    if (surface) surface.live = false;
  }

  const halt = journal.halted();
  traced.finish({
    ok: envelope.ok && !halt,
    errorKind: halt ? halt.kind : envelope.error?.kind,
    calls: engineRun.calls.length,
  });
  const audited = Promise.all([created, engineRun.recorded()]);
  audited.catch(() => undefined);
  if (halt?.kind === "parked" || halt?.kind === "lease_lost") {
    // Calls in flight settle their journal rows first: a replay then finds their outcome.
    await engineRun.idle();
    await audited.catch(() => undefined);
    if (halt.kind === "parked" && (await park(deps, plan, halt.approvalId, onEvent))) {
      deps.surfaces.parked(runId, halt.approvalId);
      return { kind: "parked", approvalId: halt.approvalId };
    }
    deps.surfaces.watch(runId);
    return { kind: "lost" };
  }
  if (halt) {
    envelope = buildEnvelope({
      error: { kind: halt.kind === "diverged" ? "diverged" : "ended", message: halt.message },
      logs: envelope.logs,
      calls: engineRun.calls,
      images: engineRun.images,
      durationMs: deps.clock.now() - plan.startedAt,
    });
  }
  if (!(await recordFinish(deps, plan, envelope, audited, onEvent))) {
    deps.surfaces.watch(runId);
    return { kind: "lost" };
  }
  return { kind: "finished", result: { runId, envelope } };
}

function runRef(deps: AttemptDeps, plan: AttemptPlan): RunRef {
  return {
    id: plan.runId,
    mcpRequestId: plan.create?.mcpRequestId ?? plan.stored?.mcpRequestId ?? null,
    instanceId: deps.instanceId,
  };
}

async function park(
  deps: AttemptDeps,
  plan: AttemptPlan,
  approvalId: string,
  onEvent?: (event: EngineEvent) => void,
): Promise<boolean> {
  const at = deps.clock.now();
  const parked = await deps.runs.park(plan.runId, { approvalId, computeMs: 0, at, fence: plan.token });
  if (!parked) return false;
  await publish(
    deps,
    { type: "run.parked", runId: plan.runId, sessionId: plan.session.id, approvalId, at },
    onEvent,
  );
  await deps.lifecycle?.parked?.(runRef(deps, plan), approvalId);
  return true;
}

/**
 * The finished run row (fenced by the lease) and its event; then waits for the run's whole audit.
 * A first attempt's row and event are queued with its read calls (one commit); a replay's event
 * goes out only once its row is written.
 */
async function recordFinish(
  deps: AttemptDeps,
  plan: AttemptPlan,
  envelope: ObservationEnvelope,
  audited: Promise<unknown>,
  onEvent?: (event: EngineEvent) => void,
): Promise<boolean> {
  const { runId } = plan;
  const finishedAt = deps.clock.now();
  const event: EngineEvent = {
    type: "run.finished",
    runId,
    sessionId: plan.session.id,
    ok: envelope.ok,
    errorKind: envelope.error?.kind ?? null,
    durationMs: envelope.durationMs,
    calls: envelope.calls.length,
    at: finishedAt,
  };
  const finishing = deps.runs.finish(
    runId,
    {
      status: envelope.ok ? "ok" : "error",
      errorKind: envelope.error?.kind ?? null,
      envelope,
      durationMs: envelope.durationMs,
      finishedAt,
    },
    plan.token,
  );
  // A run whose row is not written yet cannot have been taken over: its event joins the finish's
  // commit. Otherwise the event waits for the fenced finish, so a stalled owner that wakes after
  // another instance took the run announces nothing.
  const together = plan.token === 0 && deps.runs.unwritten?.(runId) === true;
  const [finished] = await Promise.all([finishing, together ? publish(deps, event, onEvent) : undefined]);
  if (!finished) return false;
  // The event is lazy: flush so it commits now, not with the next batch. The run's end and its
  // audit only record what happened, so they need not wait for the disk (RunStore.finish).
  if (!together) await Promise.all([publish(deps, event, onEvent), deps.runs.flush({ disk: false })]);
  try {
    await Promise.all([audited, deps.runs.flush({ disk: false })]);
  } catch (error) {
    throw new AppError(
      "INTERNAL",
      `the audit of run ${runId} could not be written: ${(error as Error).message}`,
    );
  }
  await deps.lifecycle?.finished?.(runRef(deps, plan), envelope);
  return true;
}
