/**
 * A guest's host call and a binding's place, with stand-in workers: a suspended clock takes the
 * run off its key's cap and puts it back, the reply goes to the worker unless the binding already
 * settled it there, a value that is not JSON is an `internal` error, a binding runs in its
 * caller's worker only when nothing needs masking, and a toolset's code goes to a worker once.
 */
import type { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { createBindingHost } from "./binding-host";
import { DEFAULT_LIMITS } from "./limits";
import { createCodeCache, inPlaceCaller } from "./pool-bindings";
import { createHostCallHandler, encodeReply } from "./pool-host-calls";
import { GuestCall, type HostCallControl, type HostCallReply, type PendingJob, type Slot } from "./pool-jobs";
import type { BindingJob, ToWorker } from "./protocol";

function fakeSlot(): Slot {
  return {
    worker: {} as Worker,
    key: "k",
    jobs: new Map(),
    computing: new Set(),
    idleSince: 0,
    watchdogDeadline: new Float64Array(1),
    watchdogIds: new Int32Array(4),
    alive: true,
    isReady: true,
    ready: Promise.resolve(),
    markReady: () => {},
    codes: new Set(),
  };
}

function fakeJob(
  slot: Slot,
  onCall: PendingJob["onCall"],
  kind: "action" | "binding" = "action",
): PendingJob {
  const job: PendingJob = {
    id: 1,
    job: { kind: "action", code: "", limits: DEFAULT_LIMITS, inputJson: "null", modules: {} },
    key: "k",
    slot,
    startedAt: 0,
    suspended: 0,
    onCall,
    done: new AbortController(),
    resolve: () => {},
  };
  if (kind === "binding") {
    job.job = {
      kind: "binding",
      code: "",
      limits: DEFAULT_LIMITS,
      exportName: "f",
      argsJson: "[]",
      envJson: "{}",
    };
  }
  slot.jobs.set(job.id, job);
  return job;
}

function handler() {
  const sent: ToWorker[] = [];
  const admitted: number[] = [];
  let drains = 0;
  const handle = createHostCallHandler({
    send: (_slot, message) => sent.push(message),
    admit: (_key, delta) => admitted.push(delta),
    drain: () => {
      drains += 1;
    },
  });
  return { handle, sent, admitted, drains: () => drains };
}

describe("pool host calls", () => {
  it("parks a run while its clock is suspended and counts it again after", async () => {
    const { handle, sent, admitted, drains } = handler();
    const slot = fakeSlot();
    let seen: HostCallControl | undefined;
    const job = fakeJob(slot, async (_name, _json, control) => {
      seen = control;
      const resume = control.suspendClock();
      control.suspendClock(); // a second wait, left open: the handler closes it
      resume();
      resume(); // twice is once
      return { ok: true, value: { answer: 42 } };
    });
    await handle(slot, job, 9, "mod.fn", "{}");
    expect(seen?.call).toBeInstanceOf(GuestCall);
    expect(admitted).toEqual([-1, 1]);
    expect(drains()).toBe(1);
    expect(job.suspended).toBe(0);
    expect(sent).toEqual([
      { t: "clock", id: 1, suspended: true },
      { t: "clock", id: 1, suspended: true },
      { t: "clock", id: 1, suspended: false },
      { t: "clock", id: 1, suspended: false },
      { t: "reply", id: 1, callId: 9, ok: true, json: '{"answer":42}' },
    ]);
    expect(slot.computing.has(job.id)).toBe(true);
  });

  it("turns a throwing callback into an internal error, and sends nothing for a job that left", async () => {
    const { handle, sent } = handler();
    const slot = fakeSlot();
    const job = fakeJob(slot, async () => {
      throw new Error("store down");
    });
    await handle(slot, job, 1, "x", "{}");
    expect(sent.at(-1)).toEqual({
      t: "reply",
      id: 1,
      callId: 1,
      ok: false,
      json: JSON.stringify({ error: "internal", message: "host call failed: store down" }),
    });
    const other = fakeSlot();
    const gone = fakeJob(other, async () => {
      other.jobs.clear();
      return { ok: true };
    });
    const before = sent.length;
    await handle(other, gone, 2, "x", "{}");
    expect(sent.length).toBe(before);
  });

  it("encodes a reply, and a value that is not JSON as an internal error", () => {
    expect(encodeReply({ ok: true })).toEqual({ ok: true, json: "" });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const reply: HostCallReply = { ok: true, value: cyclic };
    expect(encodeReply(reply)).toMatchObject({
      ok: false,
      json: expect.stringContaining('"error":"internal"'),
    });
  });
});

describe("pool bindings", () => {
  it("runs a binding in its caller's worker only when nothing needs masking and the caller still runs", () => {
    const slot = fakeSlot();
    const caller = new GuestCall(
      slot,
      fakeJob(slot, async () => ({ ok: true })),
      1,
    );
    const plain = createBindingHost({ allowedHosts: [], timeoutMs: 1_000 });
    const masking = createBindingHost({ allowedHosts: [], redact: ["a-secret"], timeoutMs: 1_000 });
    expect(inPlaceCaller(caller, plain)).toBe(caller);
    expect(inPlaceCaller(caller, masking)).toBeUndefined();
    expect(inPlaceCaller({ not: "a call" }, plain)).toBeUndefined();
    caller.used = true;
    expect(inPlaceCaller(caller, plain)).toBeUndefined();
    const ended = new GuestCall(
      slot,
      fakeJob(fakeSlot(), async () => ({ ok: true })),
      2,
    );
    slot.jobs.clear();
    expect(inPlaceCaller(ended, plain)).toBeUndefined();
  });

  it("sends a long toolset code to a worker once, then by id; short code always goes whole", () => {
    const cache = createCodeCache();
    const job = (code: string): BindingJob => ({
      kind: "binding",
      code,
      limits: DEFAULT_LIMITS,
      exportName: "f",
      argsJson: "[]",
      envJson: "{}",
    });
    const long = job("x".repeat(2_000));
    const worker = new Set<number>();
    const first = cache.forWorker(worker, long);
    expect(first.code).toBe(long.code);
    expect(first.codeId).toBeGreaterThan(0);
    expect(cache.forWorker(worker, long)).toMatchObject({ code: "", codeId: first.codeId });
    expect(cache.forWorker(new Set(), long)).toMatchObject({ code: long.code, codeId: first.codeId });
    expect(cache.forWorker(worker, job("short"))).toEqual(job("short"));
    expect(cache.sent()).toBe(2);
  });
});
