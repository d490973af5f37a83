/**
 * `npx tsx bench/where-time-goes.ts`: where an action's time goes on the server as started. For
 * `return 1`, one calculator call and one server-memory `read_graph` call (stdio), one SDK client
 * back to back over loopback:
 * - on the `npm start` process: CPU per action of each of its threads (from /proc), with a p50,
 *   and of the MCP server process the read_graph calls reach;
 * - on the bench server (the same MCP handler and front server without Next.js, which the served
 *   bench shows agrees with `npm start`): bytes the main thread allocates per action, by package
 *   and by the nearest frame in ToolStore's own code (V8's sampling heap profiler, objects that
 *   were already collected included).
 * Node 20 gives its threads no names; each is shown with its start after the process's: V8's
 * platform threads (GC, compiles) start with the process, the SQLite worker when the database is
 * first opened, the sandbox workers with the pool; the sandbox worker's CPU is the one that grows
 * with a binding call (BENCH_WHERE_ACTIONS sets the count, default 1,500).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { summarize, writeMemoryGraph } from "./harness";
import { connect, load, ONE_CALL, READ_GRAPH, startProduct, startServed, stop } from "./served.bench";

const TRIVIAL = "export default async function () { return 1; }";
const N = Number(process.env.BENCH_WHERE_ACTIONS ?? 1500);
/**
 * Actions served before the first measurement (BENCH_WHERE_WARM). After 200, npm start's main
 * thread spent 3.4 ms of CPU per `return 1`; after 2,200, 2.2 ms (the JIT catching up). The bench
 * server's, after 3,000: 1.5 ms, about what the floor's main thread spends with its QuickJS run.
 */
const WARM = Number(process.env.BENCH_WHERE_WARM ?? 2000);
const SHAPES = [
  ["return 1", TRIVIAL],
  ["one calculator call", ONE_CALL],
  ["one read_graph call to server-memory (stdio)", READ_GRAPH],
] as const;

/** The fields of a /proc stat line after the command's name. */
function fields(file: string): string[] {
  const stat = fs.readFileSync(file, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/**
 * CPU ms of the process's MCP server children (all their threads), by pid: the stdio servers an
 * action's calls reach, whose work is part of an action's cost on the same cores.
 */
function childCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let children = "";
    try {
      children = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
    } catch {
      continue;
    }
    for (const child of children.split(" ").filter(Boolean).map(Number)) {
      try {
        if (!fs.readFileSync(`/proc/${child}/cmdline`, "utf8").includes("@modelcontextprotocol/server-"))
          continue;
        const f = fields(`/proc/${child}/stat`);
        out.set(child, (Number(f[11]) + Number(f[12])) * 10);
      } catch {
        // the child ended while being read
      }
    }
  }
  return out;
}

/** Each thread's CPU ms and its start, in ms after the process's (from /proc, 10 ms ticks). */
function threadCpu(pid: number): Map<number, { cpu: number; startMs: number }> {
  const out = new Map<number, { cpu: number; startMs: number }>();
  const processStart = Number(fields(`/proc/${pid}/stat`)[19]);
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const f = fields(`/proc/${pid}/task/${tid}/stat`);
      out.set(Number(tid), {
        cpu: (Number(f[11]) + Number(f[12])) * 10,
        startMs: (Number(f[19]) - processStart) * 10,
      });
    } catch {
      // the thread ended while being read
    }
  }
  return out;
}

async function perThread(dir: string): Promise<void> {
  const memory = path.join(dir, "memory.jsonl");
  writeMemoryGraph(memory);
  const env = {
    BENCH_DATABASE_URL: `file:${path.join(dir, "product.db")}`,
    BENCH_ACTION_TIMEOUT_MS: "10000",
    BENCH_MEMORY_FILE: memory,
  };
  const product = await startProduct(env, Number(process.env.BENCH_SERVED_PORT ?? 3391));
  const pid = product.pid as number;
  const client = await connect(product, product.keys.a);
  try {
    await load([client], WARM, TRIVIAL);
    for (const [name, code] of SHAPES) {
      await load([client], 200, code);
      const before = threadCpu(pid);
      const childrenBefore = childCpu(pid);
      const r = await load([client], N, code);
      const after = threadCpu(pid);
      const childrenAfter = childCpu(pid);
      const tids = [...after.keys()].sort((a, b) => a - b);
      console.log(
        `\n${name} on npm start: p50 ${summarize(r.samples).p50.toFixed(2)} ms, ${r.failures} failed`,
      );
      console.log("| thread | CPU ms per action |\n|---|---|");
      let total = 0;
      for (const tid of tids) {
        const ms = ((after.get(tid)?.cpu ?? 0) - (before.get(tid)?.cpu ?? 0)) / N;
        total += ms;
        if (ms < 0.005) continue;
        const role = tid === pid ? "main" : `started +${after.get(tid)?.startMs} ms`;
        console.log(`| ${tid} ${role} | ${ms.toFixed(3)} |`);
      }
      for (const [child, cpu] of childrenAfter) {
        const ms = (cpu - (childrenBefore.get(child) ?? 0)) / N;
        total += ms;
        if (ms >= 0.005) console.log(`| MCP server child ${child} (all its threads) | ${ms.toFixed(3)} |`);
      }
      console.log(`| all threads | ${total.toFixed(3)} |`);
    }
  } finally {
    await client.close();
    await stop(product);
  }
}

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const where = (url: string) =>
  /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)?.[1] ??
  /\/(server\/.+)$/.exec(url)?.[1] ??
  (url ? url.replace(/^.*\//, "") : "(native)");

async function allocations(dir: string): Promise<void> {
  const served = await startServed("toolstore", {
    BENCH_DATABASE_URL: `file:${path.join(dir, "served.db")}`,
    BENCH_ACTION_TIMEOUT_MS: "10000",
    BENCH_MEMORY_FILE: path.join(dir, "memory.jsonl"),
  });
  const client = await connect(served, served.keys.a);
  try {
    await load([client], WARM, TRIVIAL);
    for (const [name, code] of SHAPES) {
      await load([client], 200, code);
      await fetch(`${served.url}/__bench/alloc?start`);
      const n = Math.min(N, 500);
      await load([client], n, code);
      const { profile } = (await (await fetch(`${served.url}/__bench/alloc?stop`)).json()) as {
        profile: { head: HeapNode };
      };
      const byPackage = new Map<string, number>();
      const byOwnFrame = new Map<string, number>();
      let total = 0;
      const walk = (node: HeapNode, stack: HeapNode[]) => {
        total += node.selfSize;
        const pkg = where(node.callFrame.url);
        byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + node.selfSize);
        const own = [...stack, node]
          .reverse()
          .find((x) => x.callFrame.url.includes("/server/") && !x.callFrame.url.includes("node_modules"));
        if (own) {
          const key = `${own.callFrame.functionName || "(anonymous)"} (${where(own.callFrame.url)})`;
          byOwnFrame.set(key, (byOwnFrame.get(key) ?? 0) + node.selfSize);
        }
        for (const child of node.children) walk(child, [...stack, node]);
      };
      walk(profile.head, []);
      const kib = (bytes: number) => (bytes / n / 1024).toFixed(1);
      console.log(`\n${name} on the bench server: ${kib(total)} KiB allocated per action by the main thread`);
      console.log("| where | KiB per action |\n|---|---|");
      for (const [k, v] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 10))
        console.log(`| ${k} | ${kib(v)} |`);
      console.log("| nearest ToolStore frame | KiB per action |\n|---|---|");
      for (const [k, v] of [...byOwnFrame].sort((a, b) => b[1] - a[1]).slice(0, 10))
        console.log(`| ${k} | ${kib(v)} |`);
    }
  } finally {
    await client.close();
    await stop(served);
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-where-"));
try {
  await perThread(dir);
  await allocations(dir);
  console.log(`\n(${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)}, SQLite)`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
