/**
 * Engine benchmarks:
 * 1. one action with one read capability call through the whole path (static check, pool worker,
 *    run.invoke, gate, audit ports) against the same code in a bare fresh QuickJS runtime;
 * 2. one hundred actions waiting on approvals while other actions run: event-loop lag and the
 *    latency of the others.
 * In-memory ports, so the numbers are the engine's own cost, not the database's.
 */

import { monitorEventLoopDelay } from "node:perf_hooks";
import type { QuickJSHandle } from "quickjs-emscripten-core";
import { createEngine, type Engine } from "../server/core/actions/engine";
import { builtinModules } from "../server/core/capabilities/builtins";
import type { EngineEvent } from "../server/core/gate/ports";
import { loadCappedQuickJS } from "../server/core/sandbox/quickjs-module";
import { createCanaryModule, sessionInMode } from "../server/core/testing/fixtures";
import { createMemoryPorts } from "../server/core/testing/memory-ports";
import { type Benchmark, type BenchReport, ms, summarize } from "./harness";

const ACTION = `import { read } from "toolstore/canary";
export default async function (input) {
  const items = Array.from({ length: 200 }, (_, i) => ({ id: i, score: (i * 37) % 101 }));
  const top = items.filter((x) => x.score > 50).sort((a, b) => b.score - a.score).slice(0, 5);
  const r = await read({ value: String(input) });
  return { top: top.map((x) => x.id), echo: r.echo.value };
}`;

/** The floor: a fresh runtime per run, the canary as a synchronous host function, no checks. */
async function createBareRunner() {
  const { module } = await loadCappedQuickJS(64 * 1024 * 1024);
  return (input: number): unknown => {
    const rt = module.newRuntime();
    rt.setMaxStackSize(256 * 1024);
    rt.setModuleLoader(
      (name) =>
        name === "toolstore/canary"
          ? "export const read = async (a) => JSON.parse(globalThis.__read(JSON.stringify(a)));"
          : ACTION,
      (_base, requested) => requested,
    );
    const ctx = rt.newContext();
    const read = ctx.newFunction("__read", (json) => {
      const args = JSON.parse(ctx.getString(json));
      return ctx.newString(JSON.stringify({ category: "read", echo: args }));
    });
    ctx.setProp(ctx.global, "__read", read);
    read.dispose();
    const ns = ctx.unwrapResult(ctx.evalCode(`import("action.js")`, "driver.js", { type: "global" }));
    rt.executePendingJobs();
    const nsState = ctx.getPromiseState(ns);
    const namespace = nsState.type === "fulfilled" ? nsState.value : undefined;
    ns.dispose();
    if (!namespace) throw new Error("bare: module did not load");
    const main = ctx.getProp(namespace, "default");
    namespace.dispose();
    const arg = ctx.newNumber(input);
    const promise = ctx.unwrapResult(ctx.callFunction(main, ctx.undefined, arg));
    arg.dispose();
    main.dispose();
    rt.executePendingJobs();
    const state = ctx.getPromiseState(promise);
    promise.dispose();
    let result: unknown;
    if (state.type === "fulfilled") {
      const json = ctx.getProp(ctx.global, "JSON");
      const stringify = ctx.getProp(json, "stringify");
      const text = ctx.unwrapResult(ctx.callFunction(stringify, json, state.value as QuickJSHandle));
      result = JSON.parse(ctx.getString(text));
      for (const h of [text, stringify, json]) h.dispose();
    }
    if (state.type !== "pending") (state.type === "fulfilled" ? state.value : state.error).dispose();
    ctx.dispose();
    rt.dispose();
    return result;
  };
}

async function wholePathVsBare(): Promise<BenchReport> {
  const bare = await createBareRunner();
  const engine = createEngine({
    ports: createMemoryPorts({ keepEvents: false }),
    instanceId: "bench",
    modules: [builtinModules(), () => [createCanaryModule()]],
    poolOptions: { workers: 2 },
  });
  await engine.pool.warm();
  const session = sessionInMode("default");
  const expected = JSON.stringify(bare(1));
  const { envelope } = await engine.run({ session, code: ACTION, input: 1 });
  if (JSON.stringify(envelope.result) !== expected)
    throw new Error(`results differ: ${JSON.stringify(envelope)}`);

  const bareTimes: number[] = [];
  const engineTimes: number[] = [];
  const rounds = 20;
  const perRound = 100;
  for (let i = 0; i < 200; i++) {
    bare(i);
    await engine.run({ session, code: ACTION, input: i });
  }
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < perRound; i++) {
      const t = performance.now();
      bare(i);
      bareTimes.push(performance.now() - t);
    }
    for (let i = 0; i < perRound; i++) {
      const t = performance.now();
      await engine.run({ session, code: ACTION, input: i });
      engineTimes.push(performance.now() - t);
    }
  }
  await engine.close();
  const b = summarize(bareTimes);
  const e = summarize(engineTimes);
  return {
    title: "One action with one read capability call: whole path vs bare fresh QuickJS runtime",
    rows: [
      {
        metric: "bare QuickJS p50",
        value: ms(b.p50, 3),
        note: "fresh runtime+context, same code, synchronous host function",
      },
      { metric: "bare QuickJS p95", value: ms(b.p95, 3) },
      {
        metric: "whole path p50",
        value: ms(e.p50, 3),
        note: "static check, worker pool, run.invoke, gate, audit (memory ports)",
      },
      { metric: "whole path p95", value: ms(e.p95, 3) },
      { metric: "ratio p50 (target <= 2x)", value: `${(e.p50 / b.p50).toFixed(2)}x` },
      { metric: "ratio mean", value: `${(e.mean / b.mean).toFixed(2)}x` },
      {
        metric: "samples",
        value: `${engineTimes.length} + ${bareTimes.length}`,
        note: "interleaved rounds of 100",
      },
    ],
  };
}

async function measureOthers(engine: Engine, count: number) {
  const session = sessionInMode("default", { id: "sess_others" });
  const histogram = monitorEventLoopDelay({ resolution: 2 });
  histogram.enable();
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const { envelope } = await engine.run({ session, code: ACTION, input: i });
    if (!envelope.ok) throw new Error(`other action failed: ${JSON.stringify(envelope.error)}`);
    times.push(performance.now() - t);
  }
  histogram.disable();
  return {
    latency: summarize(times),
    // The histogram measures timer periods; subtract the 2 ms resolution to get the lag itself.
    lagP50: Math.max(0, histogram.percentile(50) / 1e6 - 2),
    lagP99: Math.max(0, histogram.percentile(99) / 1e6 - 2),
    lagMax: Math.max(0, histogram.max / 1e6 - 2),
  };
}

async function hundredWaiting(): Promise<BenchReport> {
  const ports = createMemoryPorts({ keepEvents: false });
  const engine = createEngine({
    ports,
    instanceId: "bench",
    modules: [builtinModules(), () => [createCanaryModule()]],
    poolOptions: { workers: 2 },
  });
  await engine.pool.warm();
  const baseline = await measureOthers(engine, 400);
  const rssBefore = process.memoryUsage().rss;

  const requested: string[] = [];
  ports.events.subscribe((e: EngineEvent) => {
    if (e.type === "approval.requested") requested.push(e.approval.id);
  });
  const waitingSession = sessionInMode("default", { id: "sess_waiting" });
  const startedWaiting = performance.now();
  const waiting = Array.from({ length: 100 }, (_, i) =>
    engine.run({
      session: waitingSession,
      code: `import { write } from "toolstore/canary";\nexport default async () => { try { return await write({ n: ${i} }); } catch (e) { return e.error; } };`,
    }),
  );
  while (requested.length < 100) await new Promise((r) => setTimeout(r, 10));
  const allWaitingMs = performance.now() - startedWaiting;
  const rssWaiting = process.memoryUsage().rss;
  const loaded = await measureOthers(engine, 400);

  const decideStart = performance.now();
  await Promise.all(
    requested.map((approvalId) =>
      engine.approvals.decide({ approvalId, answer: "deny", decidedBy: { userId: "bench", label: "bench" } }),
    ),
  );
  const results = await Promise.all(waiting);
  const drainMs = performance.now() - decideStart;
  const denied = results.filter((r) => r.envelope.result === "permission_denied").length;
  const stats = engine.pool.stats();
  await engine.close();
  return {
    title: "100 actions waiting on approvals while other actions run (sequential read actions)",
    rows: [
      { metric: "others p50, nobody waiting", value: ms(baseline.latency.p50, 3) },
      { metric: "others p50, 100 waiting", value: ms(loaded.latency.p50, 3) },
      { metric: "others p99, nobody waiting", value: ms(baseline.latency.p99, 3) },
      { metric: "others p99, 100 waiting", value: ms(loaded.latency.p99, 3) },
      {
        metric: "event-loop lag p50 / p99 / max, nobody waiting",
        value: `${ms(baseline.lagP50)} / ${ms(baseline.lagP99)} / ${ms(baseline.lagMax)}`,
      },
      {
        metric: "event-loop lag p50 / p99 / max, 100 waiting",
        value: `${ms(loaded.lagP50)} / ${ms(loaded.lagP99)} / ${ms(loaded.lagMax)}`,
        note: "monitorEventLoopDelay beyond its 2 ms period",
      },
      {
        metric: "time until all 100 were waiting",
        value: ms(allWaitingMs, 0),
        note: "each holds its own QuickJS runtime, up to 16 to an instance",
      },
      {
        metric: "deny all 100 -> all envelopes back",
        value: ms(drainMs, 0),
        note: `${denied}/100 saw permission_denied`,
      },
      {
        metric: "process RSS: before -> with 100 waiting",
        value: `${Math.round(rssBefore / 1048576)} -> ${Math.round(rssWaiting / 1048576)} MiB`,
        note: "main thread + both workers",
      },
      { metric: "worker replacements", value: String(stats.workersReplaced) },
    ],
  };
}

export const benchmarks: Benchmark[] = [
  { name: "engine: whole path vs bare QuickJS", run: wholePathVsBare },
  { name: "engine: 100 actions waiting on approvals", run: hundredWaiting },
];
