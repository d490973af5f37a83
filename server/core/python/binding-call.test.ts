/**
 * A Python worker's answer as a BindingResult: each outcome kind, the result limit measured after
 * masking, every secret form masked, and which answers retire the worker.
 */
import { describe, expect, it } from "vitest";
import { createBindingHost } from "../sandbox/binding-host";
import type { BindingResult } from "../sandbox/binding-runtime";
import type { SandboxErrorKind } from "../sandbox/protocol";
import { callResult } from "./binding-call";
import type { Sent } from "./call-protocol";

const SECRET = "python-secret";
const host = createBindingHost({ allowedHosts: [], redact: [SECRET], timeoutMs: 1_000 });
const context = {
  host,
  limit: 40,
  timeoutMs: 500,
  started: performance.now(),
  fail: (kind: SandboxErrorKind, message: string): BindingResult => ({
    ok: false,
    error: { kind, message: host.redact(message) },
    logs: [],
    durationMs: 0,
  }),
};

function answer(outcome: unknown, state: Partial<Sent> = {}): Sent {
  const json = typeof outcome === "string" ? outcome : JSON.stringify(outcome);
  return {
    done: {
      json,
      logs: [{ level: "log", text: Buffer.from(SECRET).toString("base64") }],
      durationMs: 1,
      memoryBytes: 0,
    },
    timedOut: false,
    cancelled: false,
    ...state,
  };
}

describe("python call result", () => {
  it("returns the value with every secret form masked, and the limit is on the masked text", () => {
    const hex = Buffer.from(SECRET).toString("hex");
    const { result, retire } = callResult(answer({ ok: true, json: JSON.stringify({ h: hex }) }), context);
    expect(result).toMatchObject({ ok: true, value: { h: "***" }, logs: [{ level: "log", text: "***" }] });
    expect(retire).toBeUndefined();
    const big = callResult(answer({ ok: true, json: JSON.stringify("x".repeat(50)) }), context);
    expect(big.result).toMatchObject({
      ok: false,
      error: { kind: "threw", message: expect.stringContaining("limit of 40") },
    });
  });

  it("names a timeout, an interrupt, a cancel and a malformed answer", () => {
    expect(callResult(answer("", { timedOut: true }), context).result).toMatchObject({
      error: { kind: "timeout", message: "the binding ran longer than 500 ms and was stopped" },
    });
    expect(callResult(answer({ ok: false, kind: "interrupted" }), context).result).toMatchObject({
      error: { kind: "timeout" },
    });
    expect(callResult(answer("", { cancelled: true }), context).result).toMatchObject({
      error: { kind: "internal", message: "the call was cancelled" },
    });
    expect(callResult(answer("{not json"), context).result).toMatchObject({
      error: { kind: "internal", message: "the python worker sent a malformed answer" },
    });
  });

  it("retires the worker after running out of memory or an interpreter failure, not after a Python error", () => {
    expect(
      callResult(answer({ ok: false, kind: "out_of_memory", message: "MemoryError" }), context),
    ).toMatchObject({
      result: { error: { kind: "out_of_memory" } },
      retire: "ran out of memory",
    });
    expect(callResult(answer({ ok: false, kind: "internal", message: "wasm trap" }), context)).toMatchObject({
      result: { error: { kind: "internal" } },
      retire: "the interpreter failed",
    });
    const threw = callResult(answer({ ok: false, kind: "threw", message: `ValueError: ${SECRET}` }), context);
    expect(threw).toEqual({
      result: expect.objectContaining({ error: { kind: "threw", message: "ValueError: ***" } }),
    });
  });
});
