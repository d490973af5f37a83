/**
 * run.invoke through direct calls (no sandbox): the gate decides, every decision is recorded,
 * and a refusal never runs the impl.
 */

import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../actions/engine";
import type { AppError } from "../errors";
import type { PolicyRule } from "../gate/rules";
import { createCanaryModule, createScriptedApprover, sessionInMode, testSession } from "../testing/fixtures";
import { createMemoryPorts, type MemoryPorts } from "../testing/memory-ports";
import { builtinModules } from "./builtins";

let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

function setup(options: { rules?: PolicyRule[]; ttlMs?: number } = {}) {
  const ports: MemoryPorts = createMemoryPorts();
  const canary = createCanaryModule();
  ports.rules.set(options.rules ?? []);
  engine = createEngine({
    ports,
    instanceId: "test",
    modules: [builtinModules(), () => [canary]],
    approvalPollMs: 10,
    ...(options.ttlMs ? { approvalTtlMs: options.ttlMs } : {}),
  });
  return { ports, canary, engine };
}

async function invokeCatching(
  e: Engine,
  session: ReturnType<typeof testSession>,
  name: string,
  args: unknown,
) {
  try {
    const { value } = await e.invoke({ session, name, args });
    return { value };
  } catch (error) {
    return { error: error as AppError };
  }
}

describe("a refusal never runs the impl", () => {
  it("deny rule (also in auto mode)", async () => {
    const { engine, canary } = setup({
      rules: [{ id: "r1", effect: "deny", pattern: "canary.*", conditions: [] }],
    });
    const r = await invokeCatching(engine, sessionInMode("auto"), "canary.read", { value: "x" });
    expect(r.error?.code).toBe("GATE_DENIED");
    expect(r.error?.details).toEqual({
      error: "permission_denied",
      capability: "canary.read",
      reason: expect.any(String),
    });
    expect(canary.runs).toHaveLength(0);
  });

  it("plan mode", async () => {
    const { engine, canary } = setup();
    const r = await invokeCatching(engine, sessionInMode("plan"), "canary.write", {});
    expect(r.error?.code).toBe("GATE_BLOCKED_PLAN");
    expect(r.error?.details).toEqual({ error: "blocked_in_plan_mode", capability: "canary.write" });
    expect(canary.runs).toHaveLength(0);
  });

  it("a human denial", async () => {
    const { engine, canary, ports } = setup();
    ports.events.subscribe(createScriptedApprover(engine.approvals, () => "deny").onEvent);
    const r = await invokeCatching(engine, testSession(), "canary.execute", { value: "rm" });
    expect(r.error?.code).toBe("GATE_DENIED");
    expect(canary.runs).toHaveLength(0);
  });

  it("an expired request", async () => {
    const { engine, canary } = setup({ ttlMs: 50 });
    const r = await invokeCatching(engine, testSession(), "canary.external", {});
    expect(r.error?.details).toMatchObject({
      error: "permission_denied",
      reason: "the approval request expired",
    });
    expect(canary.runs).toHaveLength(0);
  });

  it("arguments that fail the input schema, naming the field", async () => {
    const { engine, canary } = setup();
    const r = await invokeCatching(engine, testSession(), "canary.read", { value: 42 });
    expect(r.error?.code).toBe("BAD_INPUT");
    expect(r.error?.message).toMatch(/`value` must be string/);
    expect(canary.runs).toHaveLength(0);
  });

  it("arguments that are not one plain JSON object", async () => {
    const { engine } = setup();
    for (const bad of [[1, 2], "x", null, { d: new Date() }, { f: () => 1 }, { n: Number.NaN }]) {
      expect((await invokeCatching(engine, testSession(), "canary.read", bad)).error?.code).toBe("BAD_INPUT");
    }
  });
});

describe("run.invoke", () => {
  it("records every decision (audit + event) with the argument hash", async () => {
    const { engine, ports } = setup();
    await engine.invoke({ session: testSession(), name: "canary.read", args: { value: "a" } });
    await invokeCatching(engine, sessionInMode("plan"), "canary.write", { value: "b" });
    expect(ports.decisions.all.map((d) => [d.capability, d.decision])).toEqual([
      ["canary.read", "allow"],
      ["canary.write", "blocked"],
    ]);
    expect(ports.decisions.all[0]?.argsHash).toMatch(/^[0-9a-f]{64}$/);
    expect(ports.events.all.filter((e) => e.type === "gate.decision")).toHaveLength(2);
  });

  it("refuses unknown and unmounted capabilities with a hint", async () => {
    const { engine } = setup();
    const unknown = await invokeCatching(engine, testSession(), "canary.reed", {});
    expect(unknown.error?.code).toBe("CAPABILITY_UNKNOWN");
    expect(unknown.error?.message).toMatch(/did you mean "canary.read"/);
    const unmounted = await invokeCatching(
      engine,
      testSession({ mountedModules: ["store"] }),
      "canary.read",
      {},
    );
    expect(unmounted.error?.code).toBe("CAPABILITY_UNKNOWN");
  });

  it("hands the impl a frozen copy equal to the approved snapshot", async () => {
    const { engine, canary, ports } = setup();
    ports.events.subscribe(createScriptedApprover(engine.approvals, () => "once").onEvent);
    const args = { value: "v", nested: { b: 2, a: 1 } };
    const pending = engine.invoke({ session: testSession(), name: "canary.write", args });
    args.value = "changed after the call";
    await pending;
    const ran = canary.runs[0]?.args;
    expect(ran).toEqual({ value: "v", nested: { a: 1, b: 2 } });
    expect(Object.isFrozen(ran)).toBe(true);
    const approval = [...ports.approvals.all.values()][0];
    expect(approval?.argsSnapshot).toBe(JSON.stringify({ nested: { a: 1, b: 2 }, value: "v" }));
    expect(approval?.consumedAt).not.toBeNull();
  });

  it("allow for this session skips later prompts for the same capability version only", async () => {
    const { engine, ports, canary } = setup();
    const approver = createScriptedApprover(engine.approvals, () => "session");
    ports.events.subscribe(approver.onEvent);
    const session = testSession();
    await engine.invoke({ session, name: "canary.write", args: { n: 1 } });
    await engine.invoke({ session, name: "canary.write", args: { n: 2 } });
    expect(approver.answered).toHaveLength(1);
    expect(canary.runs).toHaveLength(2);
    expect(ports.decisions.all.map((d) => d.reason)).toEqual([
      "approved for this session",
      "allowed for this session",
    ]);
    // Another session is asked again.
    await engine.invoke({ session: testSession({ id: "sess_other" }), name: "canary.write", args: { n: 3 } });
    expect(approver.answered).toHaveLength(2);
  });

  it("store.execute calls a binding through run.invoke, gated like an import", async () => {
    const { engine, canary } = setup();
    const direct = await invokeCatching(engine, sessionInMode("plan"), "store.execute", {
      tool_name: "canary",
      arguments: { function: "write", value: "x" },
    });
    expect(direct.error?.code).toBe("GATE_BLOCKED_PLAN");
    expect(canary.runs).toHaveLength(0);
    const ok = await engine.invoke({
      session: sessionInMode("plan"),
      name: "store.execute",
      args: { tool_name: "canary", arguments: { function: "read", value: "y" } },
    });
    expect(ok.value).toEqual({ category: "read", echo: { value: "y" } });
    expect(ok.run.calls.map((c) => [c.capability, c.decision])).toEqual([
      ["store.execute", "allow"],
      ["canary.read", "allow"],
    ]);
  });

  it("a call budget caps calls per run", async () => {
    const { engine } = setup();
    const limited = (await import("./invoke")).createEngineRun(
      {
        registry: engine.registry,
        gate: engine.gate,
        decisions: { record: async () => {}, settle: async () => {} },
        events: { publish: async () => {} },
        clock: { now: Date.now },
      },
      {
        runId: "r",
        session: testSession(),
        signal: new AbortController().signal,
        sandboxed: false,
        maxCalls: 2,
      },
    );
    await limited.invoke("canary.read", {});
    await limited.invoke("canary.read", {});
    await expect(limited.invoke("canary.read", {})).rejects.toMatchObject({ code: "LIMIT_EXCEEDED" });
  });
});
