/**
 * The pool's side of a TypeScript toolset binding: the job a call becomes (the module as a
 * factory, so a warm context still gives every call fresh state), its host calls served by the
 * shared binding host (binding-host.ts), where it runs (in its calling action's worker, or in the
 * toolset's own lane), the toolset's code sent to a worker once and then named by id, and the
 * result masked on the way back.
 */
import { bindingFactorySource } from "./binding-factory";
import { type BindingHost, createBindingHost } from "./binding-host";
import type { BindingResult, RunBindingRequest } from "./binding-runtime";
import type { SandboxLimits } from "./limits";
import { GuestCall, type HostCallReply } from "./pool-jobs";
import type { SubmittedRun } from "./pool-runs";
import type { BindingJob, Job, WorkerOutcome } from "./protocol";

/** Binding code at least this long goes to each worker once, then by id. */
const CODE_BY_ID_MIN_CHARS = 1024;
/** Code ids one worker is sent at most; further code goes with every job. */
const MAX_CODES_PER_WORKER = 256;
const MAX_CODE_IDS = 1000;

type Submit = (job: Job, key: string, run: SubmittedRun) => Promise<WorkerOutcome & { durationMs: number }>;

/** One binding call: its host, where it runs, its job submitted under the toolset's lane, its result masked. */
export async function runPoolBinding(
  request: RunBindingRequest,
  limits: SandboxLimits,
  hostAliases: Readonly<Record<string, string>> | undefined,
  submit: Submit,
): Promise<BindingResult> {
  const host = createBindingHost({
    allowedHosts: request.allowedHosts,
    env: request.env,
    ...(request.secrets ? { secrets: request.secrets } : {}),
    ...(request.secretPlacements ? { placements: request.secretPlacements } : {}),
    ...(request.redact ? { redact: request.redact } : {}),
    timeoutMs: limits.deadlineMs,
    maxBodyBytes: 4 << 20,
    ...(request.fetch ? { fetch: request.fetch } : {}),
    ...(hostAliases ? { hostAliases } : {}),
  });
  const here = inPlaceCaller(request.caller, host);
  const onCall = (name: string, json: string, control: { signal: AbortSignal }): Promise<HostCallReply> =>
    host.call(name, json, control.signal);
  const key = `toolset:${request.trustDomain ?? ""}`;
  const outcome = await submit(bindingJob({ ...request, env: host.env }, limits), key, {
    onCall,
    signal: request.signal,
    here,
  });
  if (here && outcome.ok) here.delivered = true;
  return bindingResult(outcome, host);
}

export function bindingJob(request: RunBindingRequest, limits: SandboxLimits): BindingJob {
  return {
    kind: "binding",
    code: bindingFactorySource(request.code),
    limits,
    exportName: request.exportName,
    argsJson: JSON.stringify(request.args),
    envJson: JSON.stringify(request.env),
  };
}

/**
 * The calling action's guest call, when the binding may run in that action's worker: nothing to
 * mask on the way back (the result goes straight to the guest), and the caller still running.
 * Otherwise a toolset's calls are their own lane, never behind the actions that wait for them.
 */
export function inPlaceCaller(caller: unknown, host: BindingHost): GuestCall | undefined {
  if (!(caller instanceof GuestCall) || caller.used || host.masks || !caller.slot.alive) return undefined;
  return caller.slot.jobs.get(caller.job.id) === caller.job ? caller : undefined;
}

export function bindingResult(
  outcome: WorkerOutcome & { durationMs: number },
  host: BindingHost,
): BindingResult {
  const logs = host.redactLogs(outcome.logs);
  if (!outcome.ok) {
    const error = outcome.error ?? { kind: "internal" as const, message: "unknown failure" };
    return {
      ok: false,
      error: { kind: error.kind, message: host.redact(error.message) },
      logs,
      durationMs: outcome.durationMs,
    };
  }
  return {
    ok: true,
    value: host.redactResult(outcome.resultJson).value,
    logs,
    durationMs: outcome.durationMs,
  };
}

export interface CodeCache {
  /** The job as sent to a worker that holds `codes`: by id when it already has the code. */
  forWorker(codes: Set<number>, job: BindingJob): BindingJob;
  /** Copies of code sent to workers so far. */
  sent(): number;
}

/** A toolset's code (tens of KiB) is copied to a worker once, not on every call. */
export function createCodeCache(): CodeCache {
  /** Binding code by content (ids are never reused). */
  const ids = new Map<string, number>();
  let nextId = 0;
  let sent = 0;
  return {
    forWorker(codes, job) {
      if (job.code.length < CODE_BY_ID_MIN_CHARS) return job;
      let id = ids.get(job.code);
      if (id === undefined) {
        if (ids.size >= MAX_CODE_IDS) ids.clear();
        id = ++nextId;
        ids.set(job.code, id);
      }
      if (codes.has(id)) return { ...job, code: "", codeId: id };
      sent += 1;
      if (codes.size >= MAX_CODES_PER_WORKER) return job;
      codes.add(id);
      return { ...job, codeId: id };
    },
    sent: () => sent,
  };
}
