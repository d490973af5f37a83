/**
 * The benchmark harness: `bench/<name>.bench.ts` files export `benchmarks: Benchmark[]`; the
 * runner (bench/run.ts) finds them, runs them one after another, and prints one table per
 * result. Benchmarks measure and report; they never fail on a number.
 */
import fs from "node:fs";

export interface BenchRow {
  metric: string;
  value: string;
  note?: string;
}

export interface BenchReport {
  title: string;
  rows: BenchRow[];
}

export interface Benchmark {
  /** Short name used to select it: `npm run bench -- <filter>`. */
  name: string;
  run(): Promise<BenchReport | BenchReport[]>;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export function summarize(samplesMs: readonly number[]): {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
} {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), mean };
}

export const ms = (value: number, digits = 2) => `${value.toFixed(digits)} ms`;

export function printReport(report: BenchReport): void {
  const width = (pick: (r: BenchRow) => string, header: string) =>
    Math.max(header.length, ...report.rows.map((r) => pick(r).length));
  const w1 = width((r) => r.metric, "metric");
  const w2 = width((r) => r.value, "value");
  const line = (a: string, b: string, c: string) => `| ${a.padEnd(w1)} | ${b.padStart(w2)} | ${c}`;
  console.log(`\n## ${report.title}\n`);
  console.log(line("metric", "value", "note"));
  console.log(`|${"-".repeat(w1 + 2)}|${"-".repeat(w2 + 2)}|------`);
  for (const row of report.rows) console.log(line(row.metric, row.value, row.note ?? ""));
}

/** server-memory's file with the 20 entities (`city-0` ... `city-19`) the read_graph benches count. */
export function writeMemoryGraph(file: string): void {
  fs.writeFileSync(
    file,
    `${Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ type: "entity", name: `city-${i}`, entityType: "city", observations: [`fact ${i}`] }),
    ).join("\n")}\n`,
  );
}
