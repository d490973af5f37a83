/**
 * Python toolsets: a warm binding call through ToolStore's python runtime (locked-down worker,
 * trust domain, JSON across the boundary, limits) against the same function called in a bare,
 * warm Pyodide in this process; interleaved rounds, reported as a ratio. Also the cold start of
 * a toolset's first call (no spare worker) and the RSS each warm worker adds.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createPythonRuntime } from "../server/core/python/runtime";
import { type Benchmark, ms, summarize } from "./harness";

const CODE = `from toolstore.toolset import tool

@tool(category="read")
def compute(a: float, b: float, op: str = "add"):
    """Basic arithmetic."""
    ops = {"add": a + b, "subtract": a - b, "multiply": a * b, "divide": a / b}
    return {"result": ops[op]}
`;
const BARE = CODE.replace("from toolstore.toolset import tool\n", "").replace('@tool(category="read")\n', "");

export const benchmarks: Benchmark[] = [
  {
    name: "python-binding",
    async run() {
      const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
      const perRound = 25;
      const rssBefore = process.memoryUsage().rss;
      let t = performance.now();
      const runtime = createPythonRuntime({ spareWorkers: 0, maxWorkers: 3 });
      const call = () =>
        runtime.runBinding({
          trustDomain: "calculator@bench",
          code: CODE,
          exportName: "compute",
          args: [],
          kwargs: { a: 6, b: 7, op: "multiply" },
          env: {},
          allowedHosts: [],
          timeoutMs: 10_000,
        });
      const first = await call();
      if (!first.ok) throw new Error(`python call failed: ${first.error.message}`);
      const coldMs = performance.now() - t;

      const dir = path.dirname(createRequire(import.meta.url).resolve("pyodide/package.json"));
      const { loadPyodide } = await import(pathToFileURL(path.join(dir, "pyodide.mjs")).href);
      t = performance.now();
      const bare = await loadPyodide({ indexURL: `${dir}${path.sep}` });
      const bareLoadMs = performance.now() - t;
      bare.runPython(BARE);
      const fn = bare.globals.get("compute");
      const bareCall = () =>
        JSON.parse(bare.runPython("import json; json.dumps(compute(a=6, b=7, op='multiply'))"));
      void fn;

      const viaToolStore: number[] = [];
      const viaBare: number[] = [];
      for (let r = 0; r < rounds; r++) {
        for (let i = 0; i < perRound; i++) {
          let s = performance.now();
          await call();
          viaToolStore.push(performance.now() - s);
          s = performance.now();
          bareCall();
          viaBare.push(performance.now() - s);
        }
      }
      const a = summarize(viaToolStore);
      const b = summarize(viaBare);

      // RSS per warm worker: warm two more trust domains and divide the growth.
      const rssOne = process.memoryUsage().rss;
      for (const domain of ["other@bench", "third@bench"]) {
        await runtime.runBinding({
          trustDomain: domain,
          code: CODE,
          exportName: "compute",
          args: [],
          kwargs: { a: 1, b: 2 },
          env: {},
          allowedHosts: [],
          timeoutMs: 10_000,
        });
      }
      const rssThree = process.memoryUsage().rss;
      await runtime.close();
      const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
      return {
        title: "python binding: ToolStore runtime vs bare warm Pyodide",
        rows: [
          { metric: "warm call via ToolStore p50", value: ms(a.p50, 3), note: `p95 ${ms(a.p95, 3)}` },
          { metric: "warm call in bare Pyodide p50", value: ms(b.p50, 3), note: `p95 ${ms(b.p95, 3)}` },
          {
            metric: "ratio ToolStore / bare (p50)",
            value: `${(a.p50 / b.p50).toFixed(1)}x`,
            note: `${rounds} interleaved rounds x ${perRound} calls; the difference is the worker round trip, JSON and limits`,
          },
          {
            metric: "cold start (first call, no spare)",
            value: ms(coldMs, 0),
            note: "worker + Pyodide load + lockdown + parse of the code",
          },
          { metric: "bare loadPyodide", value: ms(bareLoadMs, 0) },
          {
            metric: "RSS per warm worker",
            value: mb((rssThree - rssOne) / 2),
            note: `process RSS ${mb(rssBefore)} -> ${mb(rssThree)} (with one bare Pyodide in-process)`,
          },
        ],
      };
    },
  },
];
