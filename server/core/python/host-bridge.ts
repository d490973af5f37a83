/**
 * The synchronous host bridge of a Python worker: httpx in the worker posts a request and waits on
 * a shared buffer; this side has the call's binding host (binding-host.ts, the same as TypeScript
 * toolsets': allowed hosts, aliases, secrets, masking) answer it, and writes the answer into the
 * buffer. The answer is `{ ok: true, response }` or `{ ok: false, error: { error, message } }`,
 * `error` being a code of binding-host.ts.
 */
import type { BindingHostReply } from "../sandbox/binding-host";
import { BRIDGE_BYTES, type InterpreterSlot } from "./interpreter-workers";

/** Answer the worker's `fetch` message `id` (ignored once its call has ended). */
export async function answerHostFetch(slot: InterpreterSlot, id: number, json: string): Promise<void> {
  const job = slot.job;
  if (!job || job.id !== id) return;
  const reply: BindingHostReply = job.host
    ? await job.host.call("fetch", json, job.controller.signal)
    : { ok: false, error: { error: "permission_denied", message: "no network while parsing" } };
  if (!slot.alive || slot.job !== job) return;
  writeAnswer(slot, reply.ok ? { ok: true, response: reply.value } : reply);
}

function writeAnswer(slot: InterpreterSlot, answer: unknown): void {
  let bytes = Buffer.from(JSON.stringify(answer), "utf8");
  if (bytes.byteLength > BRIDGE_BYTES) {
    const error = { error: "limit_exceeded", message: "the response is too large" };
    bytes = Buffer.from(JSON.stringify({ ok: false, error }));
  }
  slot.bridgeData.set(bytes, 0);
  Atomics.store(slot.bridgeState, 1, bytes.byteLength);
  Atomics.store(slot.bridgeState, 0, 1);
  Atomics.notify(slot.bridgeState, 0);
}
