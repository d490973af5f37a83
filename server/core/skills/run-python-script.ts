/**
 * Runs a skill's Python script (`scripts/*.py`) in the Python runtime, with the lockdown of a
 * toolset's interpreter (no host JavaScript, no subprocesses, threads or sockets) and no network:
 * no hosts are allowed and no environment is set. Each script text is its own trust domain, so it
 * never shares an interpreter with a toolset or another script. The contract:
 * `def main(input):` returning a JSON value; print() goes to the logs. Unlike a JavaScript script,
 * a Python script cannot call capabilities: it computes on its input only.
 */
import type { RunScriptRequest } from "../python/runtime";
import type { BindingResult } from "../sandbox/binding-runtime";
import type { SkillScriptResult, SkillScriptRunner } from "./run-script";

export interface PythonScriptRunnerDeps {
  /** The Python runtime (only its `runScript` is used). */
  python: { runScript(request: RunScriptRequest): Promise<BindingResult> };
  /** Deadline of one script, once its interpreter is ready. Default 30 s. */
  timeoutMs?: number;
}

export function createPythonScriptRunner(deps: PythonScriptRunnerDeps): SkillScriptRunner {
  const timeoutMs = deps.timeoutMs ?? 30_000;
  return async (run, script) => {
    const outcome = await deps.python.runScript({
      file: script.label,
      code: script.code,
      input: script.input,
      timeoutMs,
      signal: run.signal,
      ...(run.pauseDeadline ? { pauseDeadline: () => run.pauseDeadline?.() ?? (() => {}) } : {}),
    });
    const logs = outcome.logs.map((l) => ({ level: l.level, text: l.text }));
    if (outcome.ok) return { ok: true, result: outcome.value, logs } as SkillScriptResult;
    return { ok: false, error: { kind: outcome.error.kind, message: outcome.error.message }, logs };
  };
}
