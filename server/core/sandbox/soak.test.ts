/**
 * 10,000 sequential actions through the whole path (static check, pool, run.invoke, gate) leave
 * memory flat: no runtime, handle, module or listener is kept per action.
 */

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import { createEngine } from "../actions/engine";
import { builtinModules } from "../capabilities/builtins";
import { createCanaryModule, sessionInMode } from "../testing/fixtures";
import { createMemoryPorts } from "../testing/memory-ports";

const TOTAL = 10_000;
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
/**
 * RSS rises to a plateau over the first few thousand actions (the worker's V8 heap and its QuickJS
 * instances reach their steady size: 131, 154, 166, 168 MiB at 1,000 to 4,000 in one run), so the
 * baseline is taken after that, and the 7,000 actions after it must stay flat.
 */
const WARMUP = 3_000;

describe("memory stays flat", () => {
  // A deny rule on the write: the read runs, the write is refused (plan mode would plan it).
  const ports = createMemoryPorts({ keepEvents: false });
  ports.rules.set([{ id: "no-write", effect: "deny", pattern: "canary.write", conditions: [] }]);
  const engine = createEngine({
    ports,
    instanceId: "soak",
    modules: [builtinModules(), () => [createCanaryModule()]],
    poolOptions: { workers: 1 },
  });
  afterAll(() => engine.close());

  it(`over ${TOTAL} sequential actions`, { timeout: 240_000 }, async () => {
    // Plan mode: the read runs, the write is refused, so both the resolve and the reject paths of
    // a host call are exercised every time.
    const session = sessionInMode("default");
    const code = `import { read, write } from "toolstore/canary";
export default async (input) => {
  const items = Array.from({ length: 50 }, (_, i) => ({ i, s: "item " + i }));
  const r = await read({ value: String(input) });
  let refused = null;
  try { await write({ value: "x" }); } catch (e) { refused = e.error; }
  console.log("done", input);
  return { n: items.filter((x) => x.i % 2).length, echo: r.echo.value, refused };
};`;
    const usage = () => {
      const m = process.memoryUsage();
      return { rss: m.rss, heap: m.heapUsed, external: m.external };
    };
    let baseline = usage();
    const samples: string[] = [];
    for (let i = 0; i < TOTAL; i++) {
      const { envelope } = await engine.run({ session, code, input: i });
      if (!envelope.ok || (envelope.result as { refused?: string }).refused !== "permission_denied") {
        throw new Error(`action ${i} failed: ${JSON.stringify(envelope)}`);
      }
      if (i === WARMUP) {
        gc();
        baseline = usage();
      }
      if (i > WARMUP && i % 1000 === 0) {
        gc();
        samples.push(`${Math.round(usage().heap / 1048576)}/${Math.round(usage().rss / 1048576)}`);
      }
    }
    gc();
    const end = usage();
    const growthMb = (end.rss - baseline.rss) / 1024 / 1024;
    console.log(`soak: heap/rss MiB every 1000 actions: ${samples.join(" ")}`);
    console.log(
      `soak: rss ${(baseline.rss / 1048576).toFixed(0)} -> ${(end.rss / 1048576).toFixed(0)} MiB, heap ${(baseline.heap / 1048576).toFixed(0)} -> ${(end.heap / 1048576).toFixed(0)} MiB`,
    );
    // Flat within noise (about 6 MiB): a leak of 4 KiB per action would add ~27 MiB here.
    expect(growthMb).toBeLessThan(25);
    expect((end.heap - baseline.heap) / 1048576).toBeLessThan(8);
    expect(engine.pool.stats()).toMatchObject({ workersReplaced: 0, disposeFailures: 0 });
    expect(engine.pool.stats().jobsStarted).toBeGreaterThanOrEqual(TOTAL);
  });
});
