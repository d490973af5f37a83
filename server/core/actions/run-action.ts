/**
 * actions.run — the one entry for every surface (playground, MCP execute_code, CLI):
 *   record the run -> static import check (refused: nothing runs) -> sandbox pool -> every host
 *   call through run.invoke -> observation envelope -> record the finished run.
 * Also the direct-call entry (`invoke`) used by a console "try this capability" button and tests:
 * the same run.invoke, without the sandbox.
 */
import { randomUUID } from "node:crypto";
import { createEngineRun, type EngineRun, type InvokeDeps, toGuestError } from "../capabilities/invoke";
import type { JsonValue, Session } from "../capabilities/types";
import { AppError } from "../errors";
import type { EngineEvent } from "../gate/ports";
import { resolveLimits, type SandboxLimits } from "../sandbox/limits";
import type { HostCallControl, SandboxPool } from "../sandbox/pool";
import { buildEnvelope, type EnvelopeError, type ObservationEnvelope } from "./envelope";
import type { RunStore } from "./ports";
import { checkActionSource, DEFAULT_MAX_CODE_CHARS } from "./static-check";

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

export const DEFAULT_CANCEL_POLL_MS = 500;

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

export function createActionRunner(deps: ActionRunnerDeps): ActionRunner {
  const newId = deps.newId ?? randomUUID;
  const baseLimits = resolveLimits(deps.limits);
  const maxCodeChars = deps.maxCodeChars ?? DEFAULT_MAX_CODE_CHARS;
  const cancelPollMs = deps.cancelPollMs ?? DEFAULT_CANCEL_POLL_MS;
  /** Runs of this process, by id: the handle a cancel from anywhere aborts. */
  const active = new Map<string, AbortController>();
  let cancelTimer: ReturnType<typeof setTimeout> | undefined;
  let checking = false;

  function abortLocal(runId: string, reason: string): boolean {
    const controller = active.get(runId);
    if (!controller) return false;
    controller.abort(new Error(reason));
    return true;
  }

  async function checkCancels(): Promise<void> {
    if (checking || active.size === 0) return;
    checking = true;
    try {
      for (const id of await deps.runs.cancelRequested([...active.keys()])) {
        abortLocal(id, "the run was cancelled");
      }
    } catch {
      // Retried on the next tick; a cancel is never lost, only late.
    } finally {
      checking = false;
    }
  }

  function scheduleCancelCheck(): void {
    if (cancelTimer || active.size === 0) return;
    cancelTimer = setTimeout(() => {
      cancelTimer = undefined;
      void checkCancels().finally(scheduleCancelCheck);
    }, cancelPollMs);
    cancelTimer.unref?.();
  }

  async function publish(event: EngineEvent, local?: (event: EngineEvent) => void): Promise<void> {
    try {
      local?.(event);
    } catch {
      // A surface's listener must not break the run.
    }
    await deps.events.publish(event, { lazy: true });
  }

  async function run(input: RunActionInput): Promise<ActionRunResult> {
    const limits = resolveLimits(input.limits, baseLimits);
    const { session } = input;
    const runId = newId();
    const startedAt = deps.clock.now();
    // The run row and its first event may be written late: with the run's read-call decisions and
    // its envelope (one commit with a batching store), or before the first call or approval that
    // must be durable (`persisted`). The action does not wait for them.
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

    const ended = new AbortController();
    const onOuterAbort = () => ended.abort(input.signal?.reason);
    input.signal?.addEventListener("abort", onOuterAbort, { once: true });
    active.set(runId, ended);
    scheduleCancelCheck();
    const controls = new Set<HostCallControl>();
    const engineRun = createEngineRun(deps, {
      runId,
      session,
      signal: ended.signal,
      sandboxed: true,
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
      envelope = await execute(runId, input, limits, engineRun, controls, ended.signal, startedAt);
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
      active.delete(runId);
      input.signal?.removeEventListener("abort", onOuterAbort);
    }

    const finishedAt = deps.clock.now();
    const audited = Promise.all([created, engineRun.recorded()]);
    audited.catch(() => undefined);
    await Promise.all([
      deps.runs.finish(runId, {
        status: envelope.ok ? "ok" : "error",
        errorKind: envelope.error?.kind ?? null,
        envelope,
        durationMs: envelope.durationMs,
        finishedAt,
      }),
      publish(
        {
          type: "run.finished",
          runId,
          sessionId: session.id,
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
    return { runId, envelope };
  }

  async function execute(
    runId: string,
    input: RunActionInput,
    limits: SandboxLimits,
    engineRun: EngineRun,
    controls: Set<HostCallControl>,
    signal: AbortSignal,
    startedAt: number,
  ): Promise<ObservationEnvelope> {
    const mounted: Record<string, string[]> = {};
    for (const m of await deps.registry.mountedModules(input.session))
      mounted[m.name] = m.exports.map((e) => e.exportName);
    const check = checkActionSource(input.code, mounted, maxCodeChars);
    if (!check.ok) {
      return buildEnvelope({
        error: { kind: "refused", message: check.message },
        logs: [],
        calls: [],
        images: [],
        durationMs: deps.clock.now() - startedAt,
      });
    }
    const modules: Record<string, string[]> = {};
    for (const name of Object.keys(check.imports)) modules[name] = mounted[name] ?? [];

    const outcome = await deps.pool.runAction({
      code: input.code,
      input: input.input ?? null,
      modules,
      limits,
      signal,
      // Fair share is per API key, else per user (console, CLI), else per session.
      fairnessKey: input.session.apiKeyId
        ? `key:${input.session.apiKeyId}`
        : input.session.userId
          ? `user:${input.session.userId}`
          : `session:${input.session.id}`,
      onQueued: (queued) => {
        // Shown as `queued` while the run waits for a sandbox; a failed write only loses the label.
        deps.runs.setQueued(runId, queued).catch(() => {});
      },
      onCall: async (name, argsJson, control) => {
        controls.add(control);
        try {
          const site = control.call === undefined ? undefined : { sandboxCall: control.call };
          return { ok: true, value: await engineRun.invokeJson(name, argsJson, site) };
        } catch (error) {
          return { ok: false, error: toGuestError(name, error) };
        } finally {
          controls.delete(control);
        }
      },
    });

    let result: JsonValue | undefined;
    let error: EnvelopeError | undefined = outcome.error;
    if (outcome.ok && outcome.resultJson !== null) {
      try {
        result = JSON.parse(outcome.resultJson) as JsonValue;
      } catch {
        error = { kind: "internal", message: "the sandbox returned a result that is not JSON" };
      }
    }
    return buildEnvelope({
      result,
      error,
      logs: outcome.logs,
      logsDropped: outcome.logsDropped,
      calls: engineRun.calls,
      images: engineRun.images,
      durationMs: deps.clock.now() - startedAt,
    });
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
    abortLocal,
    checkCancels,
    async invoke(input) {
      const engineRun = createDirectRun(input);
      const value = await engineRun.invoke(input.name, input.args);
      return { value, run: engineRun };
    },
  };
}
