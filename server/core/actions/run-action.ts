/**
 * actions.run — the one entry for every surface (playground, MCP execute_code, CLI):
 *   record the run -> static import check (refused: nothing runs) -> sandbox pool -> every host
 *   call through run.invoke -> observation envelope -> record the finished run.
 * Also the direct-call entry (`invoke`) used by a console "try this capability" button and tests:
 * the same run.invoke, without the sandbox.
 */
import { randomUUID } from "node:crypto";
import { createEngineRun, type EngineRun, type InvokeDeps } from "../capabilities/invoke";
import type { JsonValue, Session } from "../capabilities/types";
import { AppError } from "../errors";
import type { EngineEvent } from "../gate/ports";
import { resolveLimits, type SandboxLimits } from "../sandbox/limits";
import type { HostCallControl, SandboxPool } from "../sandbox/pool";
import { traceRun } from "../trace-spans";
import { buildEnvelope, type ObservationEnvelope } from "./envelope";
import { executeAction } from "./execute-action";
import { createLocalRuns } from "./local-runs";
import type { RunStore } from "./ports";
import { DEFAULT_MAX_CODE_CHARS } from "./static-check";

/** Reason for the run's own signal; a plain object, so no DOMException is built per run. */
const RUN_ENDED = Object.freeze({ name: "RunEnded", message: "the run has ended" });

export interface ActionRunnerDeps extends InvokeDeps {
  pool: SandboxPool;
  runs: RunStore;
  /** Id of this server process (recovery expires approvals of runs whose instance is gone). */
  instanceId: string;
  newId?: () => string;
  /** Defaults for actions (under the ceilings). */
  limits?: Partial<SandboxLimits>;
  maxCodeChars?: number;
  /**
   * How often, while runs are active here, the run store is asked whether someone (maybe on
   * another instance) requested a cancel. A push channel calls `checkCancels()` sooner.
   */
  cancelPollMs?: number;
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
}

export interface ActionRunResult {
  runId: string;
  envelope: ObservationEnvelope;
}

export interface DirectInvokeInput {
  session: Session;
  name: string;
  args: unknown;
  onEvent?: (event: EngineEvent) => void;
  signal?: AbortSignal;
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
}

/** Tells the run's own surface first, then the shared feed (lazily: live information only). */
async function publish(
  deps: Pick<ActionRunnerDeps, "events">,
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
function recordStart(deps: ActionRunnerDeps, runId: string, input: RunActionInput, startedAt: number) {
  const { session } = input;
  const created = Promise.all([
    deps.runs.create({
      id: runId,
      sessionId: session.id,
      surface: session.surface,
      userId: session.userId || null,
      apiKeyId: session.apiKeyId ?? null,
      title: input.title ?? "",
      code: input.code,
      mode: session.mode,
      instanceId: deps.instanceId,
      startedAt,
      ...(input.mcpRequestId ? { mcpRequestId: input.mcpRequestId } : {}),
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
        title: input.title ?? "",
        at: startedAt,
      },
      input.onEvent,
    ),
  ]).then(() => undefined);
  created.catch(() => undefined);
  return created;
}

/** The finished run row and its event; then waits until the run's whole audit is written. */
async function recordFinish(
  deps: ActionRunnerDeps,
  runId: string,
  input: RunActionInput,
  envelope: ObservationEnvelope,
  audited: Promise<unknown>,
): Promise<void> {
  const finishedAt = deps.clock.now();
  await Promise.all([
    deps.runs.finish(runId, {
      status: envelope.ok ? "ok" : "error",
      errorKind: envelope.error?.kind ?? null,
      envelope,
      durationMs: envelope.durationMs,
      finishedAt,
    }),
    publish(
      deps,
      {
        type: "run.finished",
        runId,
        sessionId: input.session.id,
        ok: envelope.ok,
        errorKind: envelope.error?.kind ?? null,
        durationMs: envelope.durationMs,
        calls: envelope.calls.length,
        at: finishedAt,
      },
      input.onEvent,
    ),
  ]);
  try {
    await Promise.all([audited, deps.runs.flush()]);
  } catch (error) {
    throw new AppError(
      "INTERNAL",
      `the audit of run ${runId} could not be written: ${(error as Error).message}`,
    );
  }
}

export function createActionRunner(deps: ActionRunnerDeps): ActionRunner {
  const newId = deps.newId ?? randomUUID;
  const baseLimits = resolveLimits(deps.limits);
  const maxCodeChars = deps.maxCodeChars ?? DEFAULT_MAX_CODE_CHARS;
  const local = createLocalRuns(deps.runs, deps.cancelPollMs);

  async function run(input: RunActionInput): Promise<ActionRunResult> {
    const limits = resolveLimits(input.limits, baseLimits);
    const { session } = input;
    const runId = newId();
    const startedAt = deps.clock.now();
    const created = recordStart(deps, runId, input, startedAt);
    const traced = traceRun(runId, session);

    const ended = new AbortController();
    const onOuterAbort = () => ended.abort(input.signal?.reason);
    input.signal?.addEventListener("abort", onOuterAbort, { once: true });
    local.add(runId, ended);
    const controls = new Set<HostCallControl>();
    const engineRun = createEngineRun(deps, {
      runId,
      session,
      signal: ended.signal,
      sandboxed: true,
      trace: traced.context,
      maxCalls: limits.maxCalls,
      argsBytes: limits.argsBytes,
      pauseDeadline: () => {
        const [control] = controls;
        return control ? control.suspendClock() : () => {};
      },
      persisted: async () => {
        await Promise.all([deps.runs.flush(), created]);
      },
      ...(input.onEvent ? { emit: input.onEvent } : {}),
    });

    let envelope: ObservationEnvelope;
    try {
      envelope = await executeAction(
        { ...deps, maxCodeChars },
        {
          runId,
          code: input.code,
          session,
          input: input.input,
          limits,
          engineRun,
          controls,
          signal: ended.signal,
          startedAt,
          trace: traced.context,
        },
      );
    } catch (error) {
      envelope = buildEnvelope({
        error: { kind: "internal", message: `the engine failed: ${(error as Error).message}` },
        logs: [],
        calls: engineRun.calls,
        images: engineRun.images,
        durationMs: deps.clock.now() - startedAt,
      });
    } finally {
      ended.abort(RUN_ENDED);
      local.remove(runId);
      input.signal?.removeEventListener("abort", onOuterAbort);
    }

    traced.finish({ ok: envelope.ok, errorKind: envelope.error?.kind, calls: envelope.calls.length });
    const audited = Promise.all([created, engineRun.recorded()]);
    audited.catch(() => undefined);
    await recordFinish(deps, runId, input, envelope, audited);
    return { runId, envelope };
  }

  function createDirectRun(input: Omit<DirectInvokeInput, "name" | "args">): EngineRun {
    return createEngineRun(deps, {
      runId: newId(),
      session: input.session,
      signal: input.signal ?? new AbortController().signal,
      sandboxed: false,
      ...(input.onEvent ? { emit: input.onEvent } : {}),
    });
  }

  return {
    run,
    createDirectRun,
    abortLocal: local.abortLocal,
    checkCancels: local.checkCancels,
    async invoke(input) {
      const engineRun = createDirectRun(input);
      const value = await engineRun.invoke(input.name, input.args);
      return { value, run: engineRun };
    },
  };
}
