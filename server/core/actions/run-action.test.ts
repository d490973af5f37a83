/**
 * actions.run through the real sandbox pool: the envelope, the gate as the guest sees it,
 * TOCTOU, parity with direct calls, and approval waits that do not count against the deadline.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { builtinModules } from "../capabilities/builtins";
import type { Session } from "../capabilities/types";
import type { ApprovalAnswer } from "../gate/approvals";
import type { EngineEvent } from "../gate/ports";
import { createSandboxPool, type SandboxPool } from "../sandbox/pool";
import { createCanaryModule, createScriptedApprover, sessionInMode, testSession } from "../testing/fixtures";
import { createMemoryPorts, type MemoryPorts } from "../testing/memory-ports";
import { makePng } from "../testing/png";
import { createEngine, type Engine } from "./engine";

let pool: SandboxPool;
beforeAll(async () => {
  pool = createSandboxPool({ workers: 2 });
  await pool.warm();
});
afterAll(() => pool.close());

let ports: MemoryPorts;
let canary: ReturnType<typeof createCanaryModule>;
let engine: Engine;
beforeEach(() => {
  ports = createMemoryPorts();
  canary = createCanaryModule();
  engine = createEngine({
    ports,
    instanceId: "inst-1",
    modules: [builtinModules(), () => [canary]],
    pool,
    approvalPollMs: 20,
  });
});

function answerWith(script: (capability: string) => ApprovalAnswer | "wait", delayMs = 0) {
  const approver = createScriptedApprover(engine.approvals, ({ capability }) => script(capability));
  ports.events.subscribe((event) => {
    if (delayMs === 0) approver.onEvent(event);
    else setTimeout(() => approver.onEvent(event), delayMs);
  });
  return approver;
}

/** A run row left running by instance inst-0, which is gone (this engine is inst-1). */
function createRunOfDeadInstance(id: string) {
  return ports.runs.create({
    id,
    sessionId: "s",
    surface: "mcp",
    userId: "u",
    apiKeyId: null,
    title: "",
    code: "",
    mode: "default",
    instanceId: "inst-0",
    startedAt: Date.now(),
  });
}

describe("actions.run", () => {
  it("a call refused by validation names the field: to the guest and in a live event", async () => {
    const events: EngineEvent[] = [];
    const { envelope } = await engine.run({
      session: sessionInMode("auto"),
      code: `import { read } from "toolstore/canary";
export default async function () {
  try {
    await read({ value: 42, n: "seven" });
  } catch (e) {
    return { error: e.error, capability: e.capability, fields: e.fields, reason: e.reason };
  }
}`,
      onEvent: (e) => events.push(e),
    });
    const fields = [
      { field: "value", reason: "must be string" },
      { field: "n", reason: "must be integer" },
    ];
    expect(envelope.result).toMatchObject({ error: "bad_input", capability: "canary.read", fields });
    expect((envelope.result as { reason: string }).reason).toContain("argument `value` must be string");
    expect(envelope.calls).toMatchObject([{ capability: "canary.read", decision: "invalid" }]);
    const refused = events.find((e) => e.type === "call.refused");
    expect(refused).toMatchObject({ capability: "canary.read", category: "read", fields });
    expect(canary.runs).toHaveLength(0);
  });

  it("returns the documented envelope with result, logs and calls", async () => {
    const events: EngineEvent[] = [];
    const { runId, envelope } = await engine.run({
      session: sessionInMode("auto"),
      code: `import { read } from "toolstore/canary";
export default async function (input) {
  console.log("hello", { n: input.n });
  console.warn("careful");
  const r = await read({ value: "a" });
  return { echoed: r.echo.value, n: input.n };
}`,
      input: { n: 7 },
      onEvent: (e) => events.push(e),
    });
    expect(Object.keys(envelope)).toEqual(["ok", "result", "logs", "calls", "images", "durationMs"]);
    expect(envelope).toMatchObject({
      ok: true,
      result: { echoed: "a", n: 7 },
      logs: [
        { level: "log", text: 'hello {"n":7}' },
        { level: "warn", text: "careful" },
      ],
      calls: [{ capability: "canary.read", category: "read", decision: "allow", ms: expect.any(Number) }],
      images: [],
    });
    expect(events.map((e) => e.type)).toEqual([
      "run.started",
      "gate.decision",
      "call.finished",
      "run.finished",
    ]);
    expect(ports.runs.all.get(runId)?.status).toBe("ok");
  });

  it("gives the guest catchable refusals shaped as the action contract says", async () => {
    ports.rules.set([
      { id: "r1", effect: "deny", pattern: "canary.execute", conditions: [], description: "no exec" },
    ]);
    const code = `import { execute, write } from "toolstore/canary";
export default async function () {
  const out = {};
  try { await execute({}); } catch (e) { out.denied = e; out.isError = e instanceof Error; }
  return out;
}`;
    const denied = await engine.run({ session: sessionInMode("auto"), code });
    expect(denied.envelope.result).toEqual({
      denied: {
        error: "permission_denied",
        capability: "canary.execute",
        reason: 'denied by rule "no exec"',
      },
      isError: true,
    });
    const planned = await engine.run({
      session: sessionInMode("plan"),
      code: `import { write } from "toolstore/canary";
export default async () => await write({});`,
    });
    expect(planned.envelope.result).toEqual({ planned: true, capability: "canary.write", id: "p1" });
    expect(planned.envelope.calls).toEqual([
      expect.objectContaining({
        capability: "canary.write",
        decision: "blocked",
        reason: "planned: not run in plan mode",
      }),
    ]);
    expect(planned.envelope.plan).toEqual({
      id: planned.runId,
      calls: [expect.objectContaining({ id: "p1", capability: "canary.write", category: "write", args: {} })],
    });
    expect(canary.runs).toHaveLength(0);
  });

  it("an uncaught refusal fails the action with kind threw", async () => {
    ports.rules.set([{ id: "r1", effect: "deny", pattern: "canary.execute", conditions: [] }]);
    const { envelope } = await engine.run({
      session: sessionInMode("default"),
      code: `import { execute } from "toolstore/canary";\nexport default async () => execute({ value: "x" });`,
    });
    expect(envelope.error).toMatchObject({
      kind: "threw",
      message: expect.stringMatching(/permission_denied/),
    });
  });

  it("refuses before anything runs", async () => {
    const { envelope } = await engine.run({
      session: testSession(),
      code: `import { wrte } from "toolstore/canary";\nexport default async () => wrte({});`,
    });
    expect(envelope).toMatchObject({ ok: false, error: { kind: "refused" }, calls: [] });
    expect(envelope.error?.message).toMatch(/did you mean "write"/);
    expect(ports.approvals.all.size).toBe(0);
  });

  it("TOCTOU: a getter that changes its answer cannot change what is approved or what runs", async () => {
    answerWith(() => "once");
    const { envelope } = await engine.run({
      session: testSession(),
      code: `import { write } from "toolstore/canary";
let reads = 0;
const args = { get value() { reads += 1; return reads === 1 ? "safe" : "EVIL"; } };
const proxy = new Proxy({}, {
  ownKeys: () => ["value"],
  getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true }),
  get: (_t, key) => (key === "value" ? ((reads += 1), reads === 2 ? "safe too" : "EVIL") : undefined),
});
export default async function () {
  const a = await write(args);
  const b = await write(proxy);
  return { first: a.echo.value, second: b.echo.value, reads };
}`,
    });
    expect(envelope.result).toEqual({ first: "safe", second: "safe too", reads: 2 });
    expect(canary.runs.map((r) => r.args.value)).toEqual(["safe", "safe too"]);
    const approved = [...ports.approvals.all.values()].map((a) => JSON.parse(a.argsSnapshot).value);
    expect(approved).toEqual(["safe", "safe too"]);
  });

  it("parity: four canary calls give the same decision transcript in the sandbox and by direct invoke", async () => {
    const script = (capability: string): ApprovalAnswer =>
      ({ "canary.write": "once", "canary.execute": "deny", "canary.external": "session" })[
        capability
      ] as ApprovalAnswer;
    answerWith(script);
    const transcript = () => {
      const out = ports.decisions.all.map((d) => ({
        capability: d.capability,
        category: d.category,
        decision: d.decision,
        reason: d.reason,
        asked: d.approvalId !== null,
      }));
      ports.decisions.all.length = 0;
      return out;
    };
    const sandboxSession: Session = testSession({ id: "sess_sandbox" });
    await engine.run({
      session: sandboxSession,
      code: `import * as c from "toolstore/canary";
export default async function () {
  const out = [];
  for (const f of [c.read, c.write, c.execute, c.external]) {
    try { out.push(await f({ value: "p" })); } catch (e) { out.push(e.error); }
  }
  return out;
}`,
    });
    const viaSandbox = transcript();

    const directSession: Session = testSession({ id: "sess_direct" });
    for (const name of ["canary.read", "canary.write", "canary.execute", "canary.external"]) {
      await engine.invoke({ session: directSession, name, args: { value: "p" } }).catch(() => undefined);
    }
    const viaDirect = transcript();
    expect(viaSandbox).toHaveLength(4);
    expect(viaSandbox).toEqual(viaDirect);
    expect(viaSandbox.map((t) => t.decision)).toEqual(["allow", "allow", "deny", "allow"]);
  });

  it("time spent waiting for an approval does not count against the deadline", async () => {
    answerWith(() => "once", 2_500);
    const { envelope } = await engine.run({
      session: testSession(),
      limits: { deadlineMs: 1_500 },
      code: `import { write } from "toolstore/canary";
export default async () => (await write({ value: "slow human" })).echo.value;`,
    });
    expect(envelope).toMatchObject({ ok: true, result: "slow human" });
    expect(envelope.durationMs).toBeGreaterThan(2_400);
  });

  it("guest work while an approval is pending still counts against the deadline", async () => {
    answerWith(() => "wait");
    const { envelope } = await engine.run({
      session: testSession(),
      limits: { deadlineMs: 400 },
      code: `import { write, read } from "toolstore/canary";
export default async () => {
  write({ value: "pending" }).catch(() => {});
  await read({});
  for (;;) {}
};`,
    });
    expect(envelope.error?.kind).toBe("timeout");
    // The run ended, so its pending approval can never be answered into a call.
    const [approval] = [...ports.approvals.all.values()];
    expect(approval?.status).toBe("expired");
    expect(canary.runs.map((r) => r.capability)).toEqual(["canary.read"]);
  });

  it("lists saved images in the envelope; pixels stay out of it", async () => {
    const png = makePng(3, 5).toString("base64");
    const { envelope } = await engine.run({
      session: sessionInMode("auto"),
      input: { png },
      code: `import { save } from "toolstore/assets";
export default async (input) => { const a = await save({ data_base64: input.png }); return a.asset_id; };`,
    });
    expect(envelope.images).toEqual([{ asset_id: envelope.result, mime: "image/png", width: 3, height: 5 }]);
    expect(JSON.stringify(envelope)).not.toContain(png.slice(0, 40));
  });

  it("cancelling a run expires its pending approval", async () => {
    answerWith(() => "wait");
    const ac = new AbortController();
    const running = engine.run({
      session: testSession(),
      signal: ac.signal,
      code: `import { write } from "toolstore/canary";\nexport default async () => write({});`,
    });
    await new Promise((r) => setTimeout(r, 200));
    ac.abort("client went away");
    const { envelope } = await running;
    expect(envelope.error?.kind).toBe("cancelled");
    await new Promise((r) => setTimeout(r, 100));
    expect([...ports.approvals.all.values()][0]?.status).toBe("expired");
    expect(canary.runs).toHaveLength(0);
  });

  it("after a restart, approvals of runs that died with the old process are expired and never run", async () => {
    await createRunOfDeadInstance("run_old");
    const record = await engine.approvals.request({
      runId: "run_old",
      session: testSession(),
      capability: { name: "canary.write", category: "write", versionHash: "canary-v1" },
      snapshot: { value: {}, json: "{}", hash: "h" },
      sessionGrantable: true,
    });
    const result = await engine.recover();
    expect(result).toEqual({ runsInterrupted: 1, approvalsExpired: 1, runsResumed: 0 });
    expect(ports.approvals.all.get(record.id)?.status).toBe("expired");
    await expect(
      engine.approvals.decide({
        approvalId: record.id,
        answer: "once",
        decidedBy: { userId: "u", label: "u" },
      }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("a run whose instance dies while recovery looks keeps its pending approval: the next pass takes it over", async () => {
    await createRunOfDeadInstance("run_stalling");
    const record = await engine.approvals.request({
      runId: "run_stalling",
      session: testSession(),
      capability: { name: "canary.write", category: "write", versionHash: "canary-v1" },
      snapshot: { value: {}, json: "{}", hash: "h" },
      sessionGrantable: true,
    });
    // inst-0's last heartbeat is still fresh when the pass lists the running runs, and stale a
    // moment later, when the pass asks which of them its approvals belong to.
    let asked = 0;
    const result = await engine.recover(() => asked++ === 0, { startup: false });
    expect(asked).toBe(1);
    expect(result).toEqual({ runsInterrupted: 0, approvalsExpired: 0, runsResumed: 0 });
    expect(ports.approvals.all.get(record.id)?.status).toBe("pending");
  });

  it("recovery closes a dead run's approvals before the run reads interrupted", async () => {
    await createRunOfDeadInstance("run_dead");
    const request = (hash: string) =>
      engine.approvals.request({
        runId: "run_dead",
        session: testSession(),
        capability: { name: "canary.write", category: "write", versionHash: "canary-v1" },
        snapshot: { value: {}, json: "{}", hash },
        sessionGrantable: true,
      });
    const pending = await request("h1");
    const allowed = await request("h2");
    // Allowed while the process still lived (the service now refuses: the run's process is dead).
    await ports.approvals.decide(
      allowed.id,
      { status: "allowed", scope: "once", decidedById: "u" },
      Date.now(),
    );
    // What a reader polling the run would see at the moment it turns `interrupted`.
    const seen: (string | undefined)[] = [];
    const mark = ports.runs.markInterrupted.bind(ports.runs);
    ports.runs.markInterrupted = async (...args) => {
      seen.push(ports.approvals.all.get(pending.id)?.status, ports.approvals.all.get(allowed.id)?.status);
      return mark(...args);
    };
    expect(await engine.recover()).toEqual({ runsInterrupted: 1, approvalsExpired: 2, runsResumed: 0 });
    expect(seen).toEqual(["expired", "abandoned"]);
  });
});
