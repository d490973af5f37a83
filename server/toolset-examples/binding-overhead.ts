/**
 * Benchmark: the overhead of calling a toolset binding through ToolStore
 * against the same function in a bare QuickJS context. Three paths, same function
 * (`calculator.evaluate`), same arguments:
 *   bare    a fresh QuickJS runtime per call, the compiled module loaded and the function called
 *           directly: the floor;
 *   pool    sandbox pool `runBinding` (worker thread, limits, entry adapter, env, redaction);
 *   gated   `engine.invoke("calculator.evaluate")`: registry, argument snapshot, schema validation,
 *           gate, audit (in-memory ports), then the pool.
 * Exported as `benchmarks` in the bench harness shape; bench/run.ts picks up bench/*.bench.ts.
 */

import { createEngine } from "../core/actions/engine";
import { builtinModules } from "../core/capabilities/builtins";
import { createSandboxPool } from "../core/sandbox/pool";
import { loadCappedQuickJS } from "../core/sandbox/quickjs-module";
import { sessionInMode } from "../core/testing/fixtures";
import { createMemoryPorts } from "../core/testing/memory-ports";
import { bindingInvocation } from "../core/toolsets";
import { buildToolsetModule } from "../modules/toolsets/toolset-modules";
import { compileExample } from "./helpers";

interface BenchRow {
  metric: string;
  value: string;
  note?: string;
}

const ARGS = { expression: "2 * (3 + 4)^2 / sqrt(16) + 5!", precision: 3 };
const ITERATIONS = 300;
const WARMUP = 30;

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function p95(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)] ?? Number.NaN;
}

async function time(fn: () => Promise<unknown> | unknown): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const started = performance.now();
    await fn();
    samples.push(performance.now() - started);
  }
  return samples;
}

export async function measureBindingOverhead(): Promise<{ title: string; rows: BenchRow[] }> {
  const calculator = compileExample("calculator");
  const binding = calculator.bindings.find((b) => b.name === "evaluate");
  if (!binding) throw new Error("calculator.evaluate is missing");
  const call = bindingInvocation(calculator.compiledJs, binding, ARGS);

  // bare: the same compiled module and entry, in a fresh runtime, called synchronously.
  const { module } = await loadCappedQuickJS(64 * 1024 * 1024);
  const bare = () => {
    const rt = module.newRuntime();
    rt.setMaxStackSize(256 * 1024);
    rt.setModuleLoader(() => call.code);
    const ctx = rt.newContext();
    const result = ctx.unwrapResult(
      ctx.evalCode(
        `import * as m from "toolset.js"; globalThis.out = JSON.stringify(m.${call.exportName}(${JSON.stringify(ARGS)}));`,
        "driver.js",
        { type: "module" },
      ),
    );
    result.dispose();
    rt.executePendingJobs();
    const out = ctx.getProp(ctx.global, "out");
    const text = ctx.getString(out);
    out.dispose();
    ctx.dispose();
    rt.dispose();
    return text;
  };

  const pool = createSandboxPool({ workers: 1 });
  const viaPool = async () => {
    const r = await pool.runBinding({
      code: call.code,
      exportName: call.exportName,
      args: call.args,
      env: {},
      allowedHosts: [],
      timeoutMs: 10_000,
    });
    if (!r.ok) throw new Error(r.error.message);
  };

  const engine = createEngine({
    ports: createMemoryPorts({ keepEvents: false }),
    instanceId: "bench",
    pool,
    modules: [
      builtinModules(),
      () => [
        buildToolsetModule({
          name: "calculator",
          description: calculator.description,
          version: { ...calculator, language: "typescript" },
          runtime: async () => ({ timeoutMs: 10_000, allowedHosts: [], env: {}, secrets: {} }),
          runtimes: () => ({ typescript: pool }),
        }),
      ],
    ],
  });
  const session = sessionInMode("auto");
  const gated = async () => {
    await engine.invoke({ session, name: "calculator.evaluate", args: ARGS });
  };

  try {
    const bareMs = await time(bare);
    const poolMs = await time(viaPool);
    const gatedMs = await time(gated);
    const b = median(bareMs);
    const fmt = (v: number) => `${v.toFixed(3)} ms`;
    return {
      title: `toolset binding call overhead: calculator.evaluate, ${ITERATIONS} calls each (medians)`,
      rows: [
        {
          metric: "bare QuickJS (fresh runtime, direct call)",
          value: fmt(b),
          note: `p95 ${fmt(p95(bareMs))}`,
        },
        { metric: "sandbox pool runBinding", value: fmt(median(poolMs)), note: `p95 ${fmt(p95(poolMs))}` },
        {
          metric: "gated call (engine.invoke)",
          value: fmt(median(gatedMs)),
          note: `p95 ${fmt(p95(gatedMs))}`,
        },
        { metric: "ratio pool / bare", value: `${(median(poolMs) / b).toFixed(1)}x` },
        {
          metric: "ratio gated / bare",
          value: `${(median(gatedMs) / b).toFixed(1)}x`,
          note: "binding call overhead",
        },
      ],
    };
  } finally {
    await engine.close();
    await pool.close();
  }
}

export const benchmarks = [{ name: "toolset-binding-overhead", run: measureBindingOverhead }];
