/**
 * Runs a skill's JavaScript script in the sandbox, as a nested action of the caller's run: the
 * same static import check as an action (only modules mounted for the caller's session), and
 * every capability call of the script goes through the caller's run.invoke, so the caller's
 * session, mode, gate, grants and call budget apply. The script's contract is an action's:
 * `export default async function (input) { ... }` returning a JSON value.
 */
import { checkActionSource, DEFAULT_MAX_CODE_CHARS } from "../actions/static-check";
import { toGuestError } from "../capabilities/invoke";
import type { CapabilityRun, JsonValue, Session } from "../capabilities/types";
import { AppError } from "../errors";
import type { SandboxLimits } from "../sandbox/limits";
import type { SandboxPool } from "../sandbox/pool";

export interface SkillScriptResult {
  ok: boolean;
  result?: JsonValue;
  error?: { kind: string; message: string };
  logs: Array<{ level: string; text: string }>;
}

export interface SkillScript {
  /** `<skill>/<path>`, for messages. */
  label: string;
  code: string;
  input: JsonValue;
}

export type SkillScriptRunner = (run: CapabilityRun, script: SkillScript) => Promise<SkillScriptResult>;

export interface SandboxScriptRunnerDeps {
  pool: SandboxPool;
  /** Module name -> export names mounted for the session (the engine's registry). */
  mountedModules(session: Session): Promise<Record<string, string[]>>;
  /** Limits of the nested job (the caller's deadline still bounds it: its signal ends it). */
  limits?: Partial<SandboxLimits>;
}

type JsonInvoker = { invokeJson?: (name: string, json: string) => Promise<unknown> };

export function createSandboxScriptRunner(deps: SandboxScriptRunnerDeps): SkillScriptRunner {
  return async (run, script) => {
    const mounted = await deps.mountedModules(run.session);
    const check = checkActionSource(script.code, mounted, DEFAULT_MAX_CODE_CHARS);
    if (!check.ok) {
      throw new AppError("BAD_INPUT", `${script.label} was refused before it ran: ${check.message}`, {
        details: { problems: check.problems },
      });
    }
    const modules: Record<string, string[]> = {};
    for (const name of Object.keys(check.imports)) modules[name] = mounted[name] ?? [];
    const invokeJson = (run as CapabilityRun & JsonInvoker).invokeJson;
    const outcome = await deps.pool.runAction({
      code: script.code,
      input: script.input,
      modules,
      ...(deps.limits ? { limits: deps.limits } : {}),
      signal: run.signal,
      onCall: async (name, argsJson, control) => {
        // The caller's own deadline keeps running (and pauses for approvals); the nested job's
        // clock stops while the host works, so a pending approval does not kill it.
        const resume = control.suspendClock();
        try {
          const value = invokeJson
            ? await invokeJson(name, argsJson)
            : await run.invoke(name, JSON.parse(argsJson));
          return { ok: true, value };
        } catch (error) {
          return { ok: false, error: toGuestError(name, error) };
        } finally {
          resume();
        }
      },
    });
    const out: SkillScriptResult = { ok: outcome.ok, logs: outcome.logs };
    if (outcome.error) out.error = { kind: outcome.error.kind, message: outcome.error.message };
    if (outcome.ok && outcome.resultJson !== null) {
      try {
        out.result = JSON.parse(outcome.resultJson) as JsonValue;
      } catch {
        return {
          ok: false,
          logs: outcome.logs,
          error: { kind: "internal", message: "the script returned a result that is not JSON" },
        };
      }
    }
    return out;
  };
}
