/**
 * Durable actions through the real sandbox pool (in-memory ports): a call that waits for a human
 * parks the run after the hot window, and the answer resumes it by replay from the journal
 * (impls that ran are not run again); the guest's clock and random numbers replay; a replay that
 * changes course fails with the divergence error; a write whose outcome was never recorded asks
 * a human before it runs again; a stalled owner that lost its lease writes nothing.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { builtinModules } from "../capabilities/builtins";
import type { CapabilityModule, JsonObject } from "../capabilities/types";
import type { EngineEvent } from "../gate/ports";
import { createSandboxPool, type SandboxPool } from "../sandbox/pool";
import { createCanaryModule, sessionInMode } from "../testing/fixtures";
import { createMemoryPorts, type MemoryPorts } from "../testing/memory-ports";
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
const engines: Engine[] = [];

function makeEngine(
  instanceId: string,
  extra: CapabilityModule[] = [],
  hot: { parkAfterMs?: number; maxHotWaits?: number } = {},
) {
  const made = createEngine({
    ports,
    instanceId,
    modules: [builtinModules(), () => [canary, ...extra]],
    pool,
    approvalPollMs: 20,
    parkAfterMs: 50,
    isInstanceAlive: () => false,
    ...hot,
  });
  engines.push(made);
  return made;
}

beforeEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  ports = createMemoryPorts();
  canary = createCanaryModule();
  engine = makeEngine("inst-1");
});

/** The next approval request (waits for its event). */
function nextApproval(): Promise<Extract<EngineEvent, { type: "approval.requested" }>["approval"]> {
  return new Promise((resolve) => {
    const off = ports.events.subscribe((event) => {
      if (event.type === "approval.requested") {
        off();
        resolve(event.approval);
      }
    });
  });
}

function parkedSoon(runId?: string): Promise<string> {
  return new Promise((resolve) => {
    const off = ports.events.subscribe((event) => {
      if (event.type === "run.parked" && (!runId || event.runId === runId)) {
        off();
        resolve(event.runId);
      }
    });
  });
}

const decider = { userId: "user_bob", label: "bob" };
const runsOf = (capability: string) => canary.runs.filter((r) => r.capability === capability).length;

/**
 * A run that wrote `value` behind an approval, parked, and whose row then says it runs on inst-0,
 * which is dead: as if inst-0 had run it and died while it waited. `extra` goes into the row too.
 */
async function runLeftByDeadOwner(value: string, extra: Record<string, unknown> = {}) {
  const requested = nextApproval();
  const parked = parkedSoon();
  void engine.run({
    session: sessionInMode("default"),
    code: `import { write } from "toolstore/canary";
export default async () => (await write({ value: "${value}" })).echo.value;`,
  });
  const approval = await requested;
  const runId = await parked;
  await engine.settled();
  const row = ports.runs.all.get(runId);
  if (!row) throw new Error("no row");
  Object.assign(row, { status: "running", instanceId: "inst-0", waitingFor: null, ...extra });
  return { approval, runId };
}

describe("durable actions", () => {
  it("parks after the hot window, then the answer resumes it by replay: each impl ran once", async () => {
    const requested = nextApproval();
    const parked = parkedSoon();
    const running = engine.run({
      session: sessionInMode("default"),
      code: `import { read, write } from "toolstore/canary";
export default async function () {
  const r = await read({ value: "a" });
  const w = await write({ value: r.echo.value + "b" });
  return { r: r.echo.value, w: w.echo.value, now: Date.now(), rand: Math.random() };
}`,
    });
    const approval = await requested;
    const runId = await parked;
    expect(ports.runs.all.get(runId)?.status).toBe("waiting");
    expect(runsOf("canary.read")).toBe(1);
    await engine.approvals.decide({ approvalId: approval.id, answer: "once", decidedBy: decider });
    const { envelope } = await running;
    expect(envelope.ok).toBe(true);
    expect(envelope.result).toMatchObject({ r: "a", w: "ab" });
    expect(runsOf("canary.read")).toBe(1);
    expect(runsOf("canary.write")).toBe(1);
    const stored = ports.runs.all.get(runId);
    expect(stored?.status).toBe("ok");
    expect(stored?.replays).toBe(1);
    expect(envelope.calls.map((c) => [c.capability, c.replayed === true])).toEqual([
      ["canary.read", true],
      ["canary.write", false],
    ]);
  });

  it("a quick answer inside the hot window keeps the live sandbox (no replay)", async () => {
    const off = ports.events.subscribe((event) => {
      if (event.type === "approval.requested") {
        void engine.approvals.decide({ approvalId: event.approval.id, answer: "once", decidedBy: decider });
      }
    });
    const slow = makeEngine("inst-2");
    void slow;
    const { runId, envelope } = await engine.run({
      session: sessionInMode("default"),
      code: `import { write } from "toolstore/canary";
export default async () => (await write({ value: "x" })).echo.value;`,
    });
    off();
    expect(envelope.result).toBe("x");
    expect(ports.runs.all.get(runId)?.replays).toBe(0);
  });

  it("an answer that lands while the run is parking resumes it as soon as it is parked", async () => {
    // The decision comes after the hot window ran out, before the row says `waiting`: the
    // approval service cannot resume a run that still runs, so the parked run looks itself.
    const requested = nextApproval();
    const park = ports.runs.park.bind(ports.runs);
    let decidedWhileParking = false;
    ports.runs.park = async (runId, input) => {
      const approval = await requested;
      await engine.approvals.decide({ approvalId: approval.id, answer: "once", decidedBy: decider });
      decidedWhileParking = ports.runs.all.get(runId)?.status === "running";
      return park(runId, input);
    };
    const { runId, envelope } = await engine.run({
      session: sessionInMode("default"),
      code: `import { write } from "toolstore/canary";
export default async () => (await write({ value: "x" })).echo.value;`,
    });
    expect(decidedWhileParking).toBe(true);
    expect(envelope.result).toBe("x");
    expect(ports.runs.all.get(runId)?.replays).toBe(1);
    expect(runsOf("canary.write")).toBe(1);
  });

  it("a cancel that lands while the run is parking still cancels it, and its request expires", async () => {
    // The canceller finds the run running (so not parked), then the run parks before its cancel
    // request is written (which only marks running or queued rows): it must look again.
    const requested = nextApproval();
    const canceller = makeEngine("inst-2");
    const park = ports.runs.park.bind(ports.runs);
    const requestCancel = ports.runs.requestCancel.bind(ports.runs);
    let parking: (() => Promise<boolean>) | undefined;
    let cancelled: Promise<boolean> | undefined;
    let parkedFirst = false;
    ports.runs.park = (runId, input) =>
      new Promise((resolve, reject) => {
        parking = async () => {
          const parked = park(runId, input);
          parked.then(resolve, reject);
          return parked;
        };
        cancelled = canceller.cancel(runId);
      });
    ports.runs.requestCancel = async (runId, at) => {
      const run = parking;
      parking = undefined;
      if (run) parkedFirst = await run();
      return requestCancel(runId, at);
    };
    const running = engine.run({
      session: sessionInMode("default"),
      code: `import { write } from "toolstore/canary";
export default async () => (await write({ value: "x" })).echo.value;`,
    });
    const approval = await requested;
    const { runId, envelope } = await running;
    expect(parkedFirst).toBe(true);
    expect(await cancelled).toBe(true);
    expect(envelope.error?.kind).toBe("cancelled");
    expect(ports.runs.all.get(runId)?.status).toBe("error");
    expect(runsOf("canary.write")).toBe(0);
    const pending = await ports.approvals.listPending({});
    expect(pending.map((p) => p.id)).not.toContain(approval.id);
  });

  it("a burst of waits beyond the hot cap parks the oldest at once; both finish once answered", async () => {
    const capped = makeEngine("inst-cap", [], { parkAfterMs: 60_000, maxHotWaits: 1 });
    const parked: string[] = [];
    const requests: string[] = [];
    const off = ports.events.subscribe((event) => {
      if (event.type === "run.parked") parked.push(event.runId);
      if (event.type === "approval.requested") requests.push(event.approval.id);
    });
    const code = (v: string) => `import { write } from "toolstore/canary";
export default async () => (await write({ value: "${v}" })).echo.value;`;
    const first = capped.run({ session: sessionInMode("default"), code: code("one") });
    const until = async (ok: () => boolean) => {
      for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(ok()).toBe(true);
    };
    await until(() => requests.length === 1);
    expect(parked).toEqual([]);
    const second = capped.run({ session: sessionInMode("default"), code: code("two") });
    // The second wait pushes the first out of the window long before its 60 s are up.
    await until(() => requests.length === 2 && parked.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(parked.length).toBe(1);
    for (const approvalId of requests)
      await capped.approvals.decide({ approvalId, answer: "once", decidedBy: decider });
    const results = await Promise.all([first, second]);
    off();
    expect(results.map((r) => r.envelope.result)).toEqual(["one", "two"]);
    expect(parked).toEqual([results[0]?.runId]);
    expect(runsOf("canary.write")).toBe(2);
  });

  it("a parked run whose client goes away is cancelled, and its request expires", async () => {
    const requested = nextApproval();
    const parked = parkedSoon();
    const client = new AbortController();
    const running = engine.run({
      session: sessionInMode("default"),
      code: `import { write } from "toolstore/canary";
export default async () => (await write({ value: "x" })).echo.value;`,
      signal: client.signal,
    });
    const approval = await requested;
    await parked;
    client.abort();
    const { envelope } = await running;
    expect(envelope.error?.kind).toBe("cancelled");
    const gone = async () => !(await ports.approvals.listPending({})).some((p) => p.id === approval.id);
    for (let i = 0; i < 50 && !(await gone()); i++) await new Promise((r) => setTimeout(r, 10));
    expect(await gone()).toBe(true);
    expect(runsOf("canary.write")).toBe(0);
  });

  it("a cancel that loses the race to the run's own client going away still expires its request", async () => {
    // The playground's Cancel aborts its own request (whose surface cancels the parked run) and
    // asks the engine, maybe on another instance, which then finds the run already ended.
    const requested = nextApproval();
    const parked = parkedSoon();
    const client = new AbortController();
    const running = engine.run({
      session: sessionInMode("default"),
      code: `import { write } from "toolstore/canary";
export default async () => (await write({ value: "x" })).echo.value;`,
      signal: client.signal,
    });
    const approval = await requested;
    const runId = await parked;
    // The surface's cancel ends the row, then stalls before anything else.
    const finish = ports.runs.finish.bind(ports.runs);
    let ended: (() => void) | undefined;
    const stalled = new Promise<void>((resolve) => {
      ended = resolve;
    });
    let release: () => void = () => {};
    ports.runs.finish = async (id, input, token) => {
      const done = await finish(id, input, token);
      ended?.();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return done;
    };
    client.abort();
    await stalled;
    ports.runs.finish = finish;
    expect(await makeEngine("inst-2").cancel(runId)).toBe(false);
    const pending = await ports.approvals.listPending({});
    expect(pending.map((p) => p.id)).not.toContain(approval.id);
    release();
    const { envelope } = await running;
    expect(envelope.error?.kind).toBe("cancelled");
    expect(runsOf("canary.write")).toBe(0);
  });

  it("Date.now() and Math.random() give the same values in the replay as in the first run", async () => {
    const requested = nextApproval();
    const parked = parkedSoon();
    const running = engine.run({
      session: sessionInMode("default"),
      code: `import { write } from "toolstore/canary";
export default async function () {
  const before = { now: Date.now(), date: new Date().toISOString(), rand: [Math.random(), Math.random()] };
  await write({ value: JSON.stringify(before) });
  return before;
}`,
    });
    const approval = await requested;
    await parked;
    // The first attempt's values went out with the write's arguments, which the human approved.
    const firstArgs = JSON.parse(String((approval.args as JsonObject).value));
    await new Promise((r) => setTimeout(r, 20));
    await engine.approvals.decide({ approvalId: approval.id, answer: "once", decidedBy: decider });
    const { envelope } = await running;
    expect(envelope.ok).toBe(true);
    expect(envelope.result).toEqual(firstArgs);
    expect(runsOf("canary.write")).toBe(1);
  });

  it("a replay that changes course fails with the divergence error and runs nothing twice", async () => {
    let counter = 0;
    const counterModule: CapabilityModule = {
      name: "counter",
      description: "A counter read outside the journal's reach (a module whose code changed).",
      source: "builtin",
      versionHash: "c1",
      exports: [
        {
          spec: {
            name: "counter.peek",
            description: "peek",
            category: "read",
            inputSchema: { type: "object", additionalProperties: true },
          },
          impl: async () => ++counter,
        },
      ],
    };
    await engine.close();
    engines.length = 0;
    engine = makeEngine("inst-1", [counterModule]);
    const requested = nextApproval();
    const parked = parkedSoon();
    const running = engine.run({
      session: sessionInMode("default"),
      code: `import { peek } from "toolstore/counter";
import { write, external } from "toolstore/canary";
export default async function () {
  const n = await peek({});
  if (n === 1) await write({ value: "first" });
  else await external({ value: "other" });
  return n;
}`,
    });
    const approval = await requested;
    const runId = await parked;
    // The journal's answer for the read is lost (its impl is treated as unrecorded): the replay reads again.
    const entry = ports.runs.journals.get(runId)?.get(1);
    if (entry) entry.state = "started";
    await engine.approvals.decide({ approvalId: approval.id, answer: "once", decidedBy: decider });
    const { envelope } = await running;
    expect(envelope.ok).toBe(false);
    expect(envelope.error?.kind).toBe("diverged");
    expect(envelope.error?.message).toMatch(
      /the action changed course at call 2: expected canary\.write with arguments #[0-9a-f]{12}, got canary\.external/,
    );
    expect(runsOf("canary.write")).toBe(0);
    expect(runsOf("canary.external")).toBe(0);
  });

  it("a write whose outcome was never recorded asks before it runs again", async () => {
    // Instance 0 died inside the write: the journal says `started` and nothing more.
    const first = nextApproval();
    const parked = parkedSoon();
    const running = engine.run({
      session: sessionInMode("default"),
      code: `import { write } from "toolstore/canary";
export default async () => (await write({ value: "once" })).echo.value;`,
    });
    const approval = await first;
    const runId = await parked;
    await engine.approvals.decide({ approvalId: approval.id, answer: "once", decidedBy: decider });
    const { envelope } = await running;
    expect(envelope.ok).toBe(true);
    expect(runsOf("canary.write")).toBe(1);
    // Now pretend the process died inside that write: the run is running, its outcome unknown.
    const row = ports.runs.all.get(runId);
    if (!row) throw new Error("no row");
    row.status = "running";
    row.instanceId = "inst-0";
    row.envelope = null;
    const entry = ports.runs.journals.get(runId)?.get(1);
    if (!entry) throw new Error("no journal entry");
    entry.state = "started";
    entry.result = null;
    const uncertain = nextApproval();
    const recovered = await engine.recover();
    expect(recovered.runsResumed).toBe(1);
    const card = await uncertain;
    expect(ports.approvals.all.get(card.id)?.kind).toBe("uncertain");
    await new Promise((r) => setTimeout(r, 120));
    expect(runsOf("canary.write")).toBe(1);
    // The human ends the action: the write is not run again.
    await engine.approvals.decide({ approvalId: card.id, answer: "deny", decidedBy: decider });
    for (let i = 0; i < 100 && ports.runs.all.get(runId)?.status === "waiting"; i++) {
      await engine.resumeDue();
      await new Promise((r) => setTimeout(r, 20));
    }
    await engine.settled();
    expect(ports.runs.all.get(runId)?.status).toBe("error");
    expect(ports.runs.all.get(runId)?.envelope?.error?.kind).toBe("ended");
    expect(runsOf("canary.write")).toBe(1);
  });

  it("a request answered while its run's attempt lay dead before journaling it is used once, not asked again", async () => {
    // Pretend instance 0 died between the approval row and the journal's `waiting` line: the run
    // is running there, its journal is empty, and the human had allowed the request (on another
    // instance, while instance 0 still counted as alive) before anything picked the run up.
    const { approval, runId } = await runLeftByDeadOwner("asked once");
    ports.runs.journals.get(runId)?.clear();
    const allowed = { status: "allowed" as const, scope: "once" as const, decidedById: decider.userId };
    expect(await ports.approvals.decide(approval.id, allowed, Date.now())).toBe(true);
    const recovered = await engine.recover();
    expect(recovered.runsResumed).toBe(1);
    await engine.settled();
    expect(ports.runs.all.get(runId)?.status).toBe("ok");
    expect(ports.runs.all.get(runId)?.envelope?.result).toBe("asked once");
    expect(runsOf("canary.write")).toBe(1);
    const asked = [...ports.approvals.all.values()].filter((a) => a.runId === runId);
    expect(asked.map((a) => [a.id, a.status, a.consumedAt !== null])).toEqual([
      [approval.id, "allowed", true],
    ]);
  });

  it("an answer given after the run's owner died, before recovery took the run over, is used by the replay", async () => {
    // Instance 0 ran the run and died while it waited in its hot window. A person answers on
    // inst-1 (to which inst-0 is dead) before a recovery pass.
    const { approval, runId } = await runLeftByDeadOwner("answered late");
    await engine.approvals.decide({ approvalId: approval.id, answer: "once", decidedBy: decider });
    expect(ports.approvals.all.get(approval.id)?.status).toBe("allowed");
    expect((await engine.recover(undefined, { startup: false })).runsResumed).toBe(1);
    await engine.settled();
    expect(ports.runs.all.get(runId)?.envelope?.result).toBe("answered late");
    expect(runsOf("canary.write")).toBe(1);
    // A run that cannot be replayed (replayed too often) is gone: its request is refused and closed.
    const stuck = await runLeftByDeadOwner("never", { replays: 5 });
    await expect(
      engine.approvals.decide({ approvalId: stuck.approval.id, answer: "once", decidedBy: decider }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    expect(ports.approvals.all.get(stuck.approval.id)?.status).toBe("expired");
    expect(runsOf("canary.write")).toBe(1);
  });

  it("another instance resumes a parked run once its owner is gone; the stalled owner writes nothing", async () => {
    const requested = nextApproval();
    const parked = parkedSoon();
    const running = engine.run({
      session: sessionInMode("default"),
      code: `import { write } from "toolstore/canary";
export default async () => (await write({ value: "b" })).echo.value;`,
    });
    const approval = await requested;
    const runId = await parked;
    // inst-1's attempt is over (parked) before anyone answers: from here on it does nothing more.
    await engine.settled();
    const other = makeEngine("inst-2");
    // The decision is taken on inst-2; inst-1 counts as dead there.
    await other.approvals.decide({ approvalId: approval.id, answer: "once", decidedBy: decider });
    for (let i = 0; i < 100 && ports.runs.all.get(runId)?.status !== "ok"; i++) {
      await other.resumeDue();
      await new Promise((r) => setTimeout(r, 20));
    }
    const { envelope } = await running;
    expect(envelope.result).toBe("b");
    expect(runsOf("canary.write")).toBe(1);
    const row = ports.runs.all.get(runId);
    expect(row?.instanceId).toBe("inst-2");
    // A stalled owner holding the old token can neither start an impl nor finish the run.
    expect(await ports.runs.holds(runId, 0)).toBe(false);
    expect(
      await ports.runs.finish(
        runId,
        { status: "error", errorKind: null, envelope, durationMs: 0, finishedAt: Date.now() },
        0,
      ),
    ).toBe(false);
  });
});
