/**
 * `npm run bench [-- <filter>]`: runs every `bench/*.bench.ts` (or those whose file or benchmark
 * name contains the filter) and prints a table per report.
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type Benchmark, printReport } from "./harness";

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2]?.toLowerCase();
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .sort();

let ran = 0;
for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { benchmarks?: Benchmark[] };
  for (const bench of mod.benchmarks ?? []) {
    if (filter && !file.toLowerCase().includes(filter) && !bench.name.toLowerCase().includes(filter))
      continue;
    ran += 1;
    const started = Date.now();
    console.log(`\n# ${bench.name} (${file})`);
    try {
      const reports = await bench.run();
      for (const report of Array.isArray(reports) ? reports : [reports]) printReport(report);
      console.log(`\n(${((Date.now() - started) / 1000).toFixed(1)} s)`);
    } catch (error) {
      console.log(`\nFAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exitCode = 1;
    }
  }
}
if (ran === 0) console.log(filter ? `no benchmark matches "${filter}"` : "no benchmarks found in bench/");
