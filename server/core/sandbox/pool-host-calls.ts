/**
 * A guest's host call as the pool serves it: the job's callback runs with a control that can stop
 * the job's deadline clock (a human approval is pending; a parked run then holds no compute slot
 * and no place under its key's cap), and the reply goes back to the worker as JSON text.
 */
import { GuestCall, type HostCallControl, type HostCallReply, type PendingJob, type Slot } from "./pool-jobs";
import type { ToWorker } from "./protocol";

export interface HostCallDeps {
  send(slot: Slot, message: ToWorker): void;
  /** The job counts against its key's cap again (1) or no longer (-1). */
  admit(key: string, delta: number): void;
  /** A run left the compute slots: start what waits. */
  drain(): void;
}

export type HostCallHandler = (
  slot: Slot,
  job: PendingJob,
  callId: number,
  name: string,
  json: string,
  clock?: number[],
) => Promise<void>;

export function createHostCallHandler(deps: HostCallDeps): HostCallHandler {
  return async (slot, job, callId, name, json, clock) => {
    const held = () => slot.jobs.get(job.id) === job;
    let suspended = 0;
    const resume = () => {
      suspended -= 1;
      job.suspended -= 1;
      // Back from a human: it counts against its key's cap again.
      if (job.suspended === 0 && held()) deps.admit(job.key, 1);
      deps.send(slot, { t: "clock", id: job.id, suspended: false });
    };
    const call = job.job.kind === "action" ? new GuestCall(slot, job, callId) : undefined;
    const control: HostCallControl = {
      signal: job.done.signal,
      ...(call ? { call } : {}),
      ...(clock ? { clock } : {}),
      suspendClock: () => {
        let open = true;
        suspended += 1;
        job.suspended += 1;
        // Waiting for a human costs memory, not compute: the key's cap no longer counts it.
        if (job.suspended === 1 && held()) {
          deps.admit(job.key, -1);
          deps.drain();
        }
        deps.send(slot, { t: "clock", id: job.id, suspended: true });
        return () => {
          if (!open) return;
          open = false;
          resume();
        };
      },
    };
    let reply: HostCallReply;
    try {
      reply = await job.onCall(name, json, control);
    } catch (error) {
      reply = {
        ok: false,
        error: { error: "internal", message: `host call failed: ${(error as Error).message}` },
      };
    }
    while (suspended > 0) resume();
    if (!held()) return;
    slot.computing.add(job.id);
    // Settled in the worker already, with the same value (a binding's result is the call's).
    if (call?.delivered && reply.ok) return;
    deps.send(slot, { t: "reply", id: job.id, callId, ...encodeReply(reply) });
  };
}

export function encodeReply(reply: HostCallReply): { ok: boolean; json: string } {
  if (!reply.ok) return { ok: false, json: JSON.stringify(reply.error) };
  try {
    return { ok: true, json: JSON.stringify(reply.value) ?? "" };
  } catch (error) {
    const message = `capability returned a value that is not JSON: ${(error as Error).message}`;
    return { ok: false, json: JSON.stringify({ error: "internal", message }) };
  }
}
