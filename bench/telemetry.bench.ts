/**
 * Tracing on vs off on the served path (issue #29: under 10% more with traces on). Two ToolStore
 * processes started as users start them, `npm start` (BENCH_TELEMETRY_SERVER=bench: the bench
 * server, bench/served-server.ts), each on its own SQLite file, side by side: one without OTEL_*
 * (metrics only, the default), one with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP/HTTP
 * receiver in a process of its own, as a collector is (http/protobuf, the batching exporter,
 * every span decoded there). The same actions run against both in interleaved rounds, the order
 * flipped each round; latency, throughput and the serving process's CPU time per action (from
 * /proc, its threads included) are reported as ratios, with the spans received per action as
 * the proof that tracing was on.
 *
 * Sizes: BENCH_SERVED_SCALE=0.1 shrinks the counts (a quick look); 1 is the full run.
 * BENCH_TELEMETRY_SAMPLER sets OTEL_TRACES_SAMPLER on the traced side (always_off: the context
 * manager and the span calls stay, nothing is recorded or exported: what the plumbing alone costs).
 */

import { type ChildProcess, fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type Benchmark, type BenchReport, type BenchRow, ms, summarize } from "./harness";
import type { CollectorCount } from "./otlp-collector";
import {
  connect,
  FIVE_SEQUENTIAL,
  load,
  ONE_CALL,
  procStats,
  type Served,
  startProduct,
  startServed,
  stop,
} from "./served.bench";

const SCALE = Number(process.env.BENCH_SERVED_SCALE ?? 1);
/** BENCH_TELEMETRY_SERVER=bench: the bench server (bench/served-server.ts); default `npm start`. */
const PRODUCT = process.env.BENCH_TELEMETRY_SERVER !== "bench";
const PORT = Number(process.env.BENCH_SERVED_PORT ?? 3391);
const scaled = (n: number, min = 1) => Math.max(min, Math.round(n * SCALE));
const ratio = (a: number, b: number) => `${(a / b).toFixed(3)}×`;

interface Side {
  served: Served;
  /** Per round and shape: that round's p50, req/s and CPU per action (for the paired ratios). */
  perRound: Record<string, { p50: number; rps: number; cpu: number }[]>;
  clients: Client[];
  samples: Record<string, number[]>;
  seconds: Record<string, number>;
  calls: Record<string, number>;
  cpuMs: Record<string, number>;
  failures: number;
}

/** The serving process's CPU time, its threads included (from /proc). */
async function cpu(served: Served): Promise<number> {
  return procStats(served.pid ?? served.child.pid ?? 0).allCpuMs;
}

interface Collector {
  url: string;
  count(): Promise<CollectorCount>;
  close(): Promise<void>;
}

function startCollector(): Promise<Collector> {
  const child: ChildProcess = fork(path.resolve("bench/otlp-collector.ts"), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = <T>() =>
    new Promise<T>((resolve, reject) => {
      child.once("message", (m) => resolve(m as T));
      child.once("exit", (code) => reject(new Error(`the OTLP collector exited with code ${code}`)));
    });
  return next<{ url: string }>().then(({ url }) => ({
    url,
    count() {
      const answer = next<CollectorCount>();
      child.send({ type: "count" });
      return answer;
    },
    async close() {
      const exited = new Promise((r) => child.once("exit", r));
      child.disconnect();
      await exited;
    },
  }));
}

async function tracingOnVsOff(): Promise<BenchReport[]> {
  const receiver = await startCollector();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-bench-otel-"));
  const common = { BENCH_ACTION_TIMEOUT_MS: "10000" };
  const otel = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    OTEL_SERVICE_NAME: "toolstore-bench",
    ...(process.env.BENCH_TELEMETRY_SAMPLER
      ? { OTEL_TRACES_SAMPLER: process.env.BENCH_TELEMETRY_SAMPLER }
      : {}),
  };
  const db = (name: string) => ({ ...common, BENCH_DATABASE_URL: `file:${path.join(dir, `${name}.db`)}` });
  // One after the other: the first `npm start` builds the console if the build is stale.
  const off = PRODUCT ? await startProduct(db("off"), PORT) : await startServed("toolstore", db("off"));
  const on = PRODUCT
    ? await startProduct({ ...db("on"), ...otel }, PORT + 1)
    : await startServed("toolstore", { ...db("on"), ...otel });
  try {
    const sideOf = (served: Served): Side => ({
      served,
      clients: [],
      perRound: {},
      samples: {},
      seconds: {},
      calls: {},
      cpuMs: {},
      failures: 0,
    });
    const sides: Record<"off" | "on", Side> = { off: sideOf(off), on: sideOf(on) };
    for (const side of Object.values(sides)) {
      side.clients = await Promise.all(
        Array.from({ length: 8 }, () => connect(side.served, side.served.keys.a)),
      );
      // Warm: workers, modules, caches, the exporter's connection.
      const warm = await load(side.clients, 5, ONE_CALL);
      if (warm.failures > 0) throw new Error(`warm-up failed: ${warm.firstFailure}`);
    }
    const shapes = [
      ["1 client, one call", 1, ONE_CALL],
      ["8 clients, one call", 8, ONE_CALL],
      ["1 client, five calls", 1, FIVE_SEQUENTIAL],
    ] as const;
    const rounds = scaled(10, 2);
    const spansBefore = (await receiver.count()).spans;
    let actionsOn = 0;
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const);
      for (const [label, n, code] of shapes) {
        const perClient = Math.max(3, Math.round(scaled(120) / n));
        for (const name of order) {
          const side = sides[name];
          const cpuBefore = await cpu(side.served);
          const r = await load(side.clients.slice(0, n), perClient, code);
          const cpuMs = (await cpu(side.served)) - cpuBefore;
          side.cpuMs[label] = (side.cpuMs[label] ?? 0) + cpuMs;
          side.perRound[label] = [
            ...(side.perRound[label] ?? []),
            {
              p50: summarize(r.samples).p50,
              rps: r.samples.length / r.seconds,
              cpu: cpuMs / Math.max(1, r.samples.length),
            },
          ];
          side.samples[label] = [...(side.samples[label] ?? []), ...r.samples];
          side.seconds[label] = (side.seconds[label] ?? 0) + r.seconds;
          side.calls[label] = (side.calls[label] ?? 0) + r.samples.length;
          side.failures += r.failures;
          if (name === "on") actionsOn += r.samples.length;
        }
      }
    }
    // Let the batching exporter send the last spans (its delay is 5 s).
    await new Promise((r) => setTimeout(r, 6_000));
    const received = await receiver.count();
    const spansPerAction = (received.spans - spansBefore) / Math.max(1, actionsOn);

    const rows: BenchRow[] = [];
    // The median over rounds of on/off within the round: each round measures both sides back to
    // back, so a drift of the machine's speed (other load, CPU frequency) cancels out of it.
    const paired = (label: string, pick: (x: { p50: number; rps: number; cpu: number }) => number) => {
      const on = sides.on.perRound[label] ?? [];
      const off = sides.off.perRound[label] ?? [];
      const ratios = on.map((x, i) => pick(x) / pick(off[i] ?? x)).sort((a, b) => a - b);
      return ratios[Math.floor(ratios.length / 2)] ?? Number.NaN;
    };
    for (const [label] of shapes) {
      const o = summarize(sides.on.samples[label] ?? []);
      const f = summarize(sides.off.samples[label] ?? []);
      const onRps = (sides.on.calls[label] ?? 0) / (sides.on.seconds[label] ?? 1);
      const offRps = (sides.off.calls[label] ?? 0) / (sides.off.seconds[label] ?? 1);
      const onCpu = (sides.on.cpuMs[label] ?? 0) / (sides.on.calls[label] ?? 1);
      const offCpu = (sides.off.cpuMs[label] ?? 0) / (sides.off.calls[label] ?? 1);
      rows.push(
        {
          metric: `${label}: p50 on / off`,
          value: `${ms(o.p50)} / ${ms(f.p50)}`,
          note: `ratio ${ratio(o.p50, f.p50)}, median of the rounds' ratios ${paired(label, (x) => x.p50).toFixed(3)}× (goal < 1.10×); p99 ${ms(o.p99)} / ${ms(f.p99)}`,
        },
        {
          metric: `${label}: req/s on / off`,
          value: `${onRps.toFixed(0)} / ${offRps.toFixed(0)}`,
          note: `ratio ${ratio(onRps, offRps)}, median of the rounds' ratios ${paired(label, (x) => x.rps).toFixed(3)}× (goal > 0.91×)`,
        },
        {
          metric: `${label}: server CPU per action on / off`,
          value: `${ms(onCpu)} / ${ms(offCpu)}`,
          note: `ratio ${ratio(onCpu, offCpu)}, median of the rounds' ratios ${paired(label, (x) => x.cpu).toFixed(3)}× (the serving process, its threads included: /proc)`,
        },
      );
    }
    rows.push({
      metric: "spans received per traced action",
      value: spansPerAction.toFixed(1),
      note: `${received.spans} spans in ${received.requests} OTLP requests (${received.contentType}); failures on ${sides.on.failures} / off ${sides.off.failures}`,
    });
    for (const side of Object.values(sides)) await Promise.all(side.clients.map((c) => c.close()));
    const machine = `${PRODUCT ? "npm start" : "bench server"}; ${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)}, shared machine; scale ${SCALE}; SQLite`;
    return [
      { title: `tracing on vs off on the served path (${rounds} interleaved rounds) [${machine}]`, rows },
    ];
  } finally {
    await stop(on);
    await stop(off);
    await receiver.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmarks: Benchmark[] = [
  { name: "telemetry: tracing on vs off on the served path", run: tracingOnVsOff },
];
