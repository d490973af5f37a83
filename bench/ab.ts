/**
 * `npx tsx bench/ab.ts [base-ref]`: this checkout (its working tree, edits included) against
 * another commit (default HEAD~1), both as `npm start` runs them, each on its own database, over
 * MCP on loopback. BENCH_DATABASE_URL=postgresql://… measures on PostgreSQL; default SQLite files.
 *
 * A third server runs the base again: an A/A pair inside the same run. On this 2-core, shared
 * machine two servers of identical code have differed by up to 18% (`return 1` p50), so a
 * difference between base and this that the A/A pair also shows is not the code's. Each round
 * starts the three afresh and measures every cell on each side in turn, in an order that runs
 * through all six permutations (start order included), so no side keeps a position or a process.
 * Only the measured side works at a time. CPU per action is read from /proc: the serving process's
 * main thread and all of its threads.
 *
 * The base tree is exported with `git archive` into $TMPDIR/toolstore-ab-<sha> and installed once
 * (kept for the next run): hard links to an earlier tree's packages when the lock file is the same,
 * else `npm ci --prefer-offline`. `npm start` builds each tree if needed.
 * BENCH_AB_ROUNDS (default 6), BENCH_AB_ACTIONS (sequential actions per cell, default 300).
 * BENCH_AB_THIS_NODE_FLAGS: Node/V8 flags for this side's serving process only, to try a flag
 * against the same code (`npx tsx bench/ab.ts HEAD` with a clean tree).
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { summarize } from "./harness";
import {
  benchDatabases,
  connect,
  load,
  ONE_CALL,
  procStats,
  type Served,
  startProduct,
  stop,
} from "./served.bench";

const TRIVIAL = "export default async function () { return 1; }";
const ROUNDS = Number(process.env.BENCH_AB_ROUNDS ?? 6);
const ACTIONS = Number(process.env.BENCH_AB_ACTIONS ?? 300);
const WARM = 2000;
/**
 * BENCH_AB_RESTART=0: one process per side for the whole run. By default every round starts each
 * side afresh (in that round's order): two processes of the same code can differ for their whole
 * life (their JIT's choices, where they landed), and one process per side would carry that
 * difference into every round.
 */
const RESTART = process.env.BENCH_AB_RESTART !== "0";
const CONCURRENT = 8;

const CELLS = [
  { label: "`return 1`, 1 client", code: TRIVIAL, clients: 1 },
  { label: "one call, 1 client", code: ONE_CALL, clients: 1 },
  { label: `one call, ${CONCURRENT} clients`, code: ONE_CALL, clients: CONCURRENT },
] as const;

interface Side {
  name: string;
  root: string;
  nodeFlags?: string;
  served?: Served;
  clients: Client[];
}

/** Per side and cell, one value per round: p50 (or req/s), main CPU and all-threads CPU per action. */
type Readings = Map<string, { p50: number[]; rps: number[]; main: number[]; all: number[] }>;

function git(args: string[]): string {
  return execFileSync("git", args, { encoding: "utf8" }).trim();
}

/** The base commit's tree, installed, in a directory kept between runs. */
function baseTree(ref: string): string {
  const sha = git(["rev-parse", "--verify", `${ref}^{commit}`]);
  const dir = path.join(os.tmpdir(), `toolstore-ab-${sha.slice(0, 12)}`);
  const ready = path.join(dir, ".ab-ready");
  if (fs.existsSync(ready)) return dir;
  console.log(`preparing ${ref} (${sha.slice(0, 12)}) in ${dir}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const archive = spawnSync("git", ["archive", sha], { maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new Error(`git archive ${sha} failed: ${archive.stderr}`);
  execFileSync("tar", ["-x", "-C", dir], { input: archive.stdout });
  const lock = fs.readFileSync(path.join(dir, "package-lock.json"), "utf8");
  // An earlier tree with the same lock file lends its packages (hard links), then generates its own
  // Prisma clients (npm ci's postinstall); otherwise npm ci.
  const donor = fs
    .readdirSync(os.tmpdir())
    .map((name) => path.join(os.tmpdir(), name))
    .find(
      (other) =>
        other !== dir &&
        path.basename(other).startsWith("toolstore-ab-") &&
        fs.existsSync(path.join(other, ".ab-ready")) &&
        fs.readFileSync(path.join(other, "package-lock.json"), "utf8") === lock,
    );
  const steps: [string, string[]][] = donor
    ? [
        ["cp", ["-al", path.join(donor, "node_modules"), path.join(dir, "node_modules")]],
        ["npm", ["run", "--silent", "db:generate"]],
      ]
    : [["npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund"]]];
  for (const [command, args] of steps) {
    const step = spawnSync(command, args, { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
    if (step.status !== 0)
      throw new Error(`${command} ${args.join(" ")} in ${dir} failed (exit ${step.status})`);
  }
  fs.writeFileSync(ready, sha);
  return dir;
}

/** Six orders of three sides: over six rounds each side is first, second and last twice. */
const ORDERS = [
  [0, 1, 2],
  [1, 2, 0],
  [2, 0, 1],
  [2, 1, 0],
  [0, 2, 1],
  [1, 0, 2],
];

async function measure(side: Side, cell: (typeof CELLS)[number]) {
  const pid = side.served?.pid as number;
  const clients = side.clients.slice(0, cell.clients);
  const perClient = Math.ceil(ACTIONS / cell.clients);
  await load(clients, 20, cell.code);
  const before = procStats(pid);
  const r = await load(clients, perClient, cell.code);
  const after = procStats(pid);
  if (r.failures > 0) throw new Error(`${side.name}: ${r.failures} failed, first: ${r.firstFailure}`);
  const n = r.samples.length;
  return {
    p50: summarize(r.samples).p50,
    rps: n / r.seconds,
    main: (after.mainCpuMs - before.mainCpuMs) / n,
    all: (after.allCpuMs - before.allCpuMs) / n,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** One-sided in all of six rounds happens by chance once in 32 (both directions counted). */
const MIN_ROUNDS_FOR_VERDICT = 6;

/** Rounds in which `x` was below `y` (the two measured in the same round), as "k/n". */
function lowerIn(x: number[], y: number[]): { text: string; oneSided: boolean } {
  const lower = x.filter((v, i) => v < (y[i] as number)).length;
  return { text: `${lower}/${x.length}`, oneSided: lower === 0 || lower === x.length };
}

/**
 * The medians, their ratios, and a sign test over the rounds: a difference counts as the code's
 * ("consistent") when this side was on the same side of the base in every round (p ≈ 0.03 for
 * six rounds) while the A/A pair was not.
 */
function report(sides: Side[], readings: Readings) {
  const [base, self, again] = sides.map((s) => s.name);
  console.log(
    `\n| cell | metric | ${base} | ${self} | ${again} | this / base | rounds this < base | A/A: again / base | rounds again < base | verdict |`,
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const cell of CELLS) {
    const metrics = [
      [cell.clients === 1 ? "p50 ms" : "req/s", cell.clients === 1 ? "p50" : "rps"],
      ["main CPU ms/action", "main"],
      ["all CPU ms/action", "all"],
    ] as const;
    for (const [label, key] of metrics) {
      const [a = [], b = [], a2 = []] = sides.map(
        (s) => readings.get(`${s.name}|${cell.label}`)?.[key] ?? [],
      );
      const ab = median(b) / median(a);
      const aa = median(a2) / median(a);
      const thisLower = lowerIn(b, a);
      const againLower = lowerIn(a2, a);
      const verdict =
        a.length < MIN_ROUNDS_FOR_VERDICT
          ? `needs ${MIN_ROUNDS_FOR_VERDICT} rounds`
          : thisLower.oneSided && !againLower.oneSided
            ? "consistent"
            : "within noise";
      console.log(
        `| ${cell.label} | ${label} | ${median(a).toFixed(2)} | ${median(b).toFixed(2)} | ${median(a2).toFixed(2)} | ${ab.toFixed(2)} | ${thisLower.text} | ${aa.toFixed(2)} | ${againLower.text} | ${verdict} |`,
      );
    }
  }
}

async function main() {
  const ref = process.argv[2] ?? "HEAD~1";
  const baseRoot = baseTree(ref);
  const pg = process.env.BENCH_DATABASE_URL?.startsWith("postgres")
    ? process.env.BENCH_DATABASE_URL
    : undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-ab-run-"));
  const sides: Side[] = [
    { name: `base (${ref})`, root: baseRoot, clients: [] },
    { name: "this", root: process.cwd(), clients: [], nodeFlags: process.env.BENCH_AB_THIS_NODE_FLAGS ?? "" },
    { name: "base again", root: baseRoot, clients: [] },
  ];
  const readings: Readings = new Map();
  const up = async (side: Side, url: string, port: number) => {
    const env = { BENCH_DATABASE_URL: url, BENCH_ACTION_TIMEOUT_MS: "10000" };
    side.served = await startProduct(env, port, side.root, side.nodeFlags);
    const key = side.served.keys.a as string;
    side.clients = await Promise.all(
      Array.from({ length: CONCURRENT }, () => connect(side.served as Served, key)),
    );
    // The JIT's warm-up: after 200 actions npm start's main thread spent 3.4 ms per `return 1`,
    // after 2,200 2.2 ms (bench/where-time-goes.ts).
    await load(side.clients.slice(0, 1), WARM, TRIVIAL);
    await load(side.clients, 40, ONE_CALL);
  };
  const down = async (side: Side) => {
    await Promise.all(side.clients.map((c) => c.close().catch(() => undefined)));
    side.clients = [];
    if (side.served) await stop(side.served);
    side.served = undefined;
  };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = (ORDERS[round % ORDERS.length] as number[]).map((i) => sides[i] as Side);
      if (round === 0 || RESTART) {
        // Fresh processes on fresh databases, started in the round's order.
        for (const side of sides) await down(side);
        const urls = await benchDatabases(
          dir,
          pg,
          sides.map((_, i) => `ab_${i}_${round}`),
        );
        for (const side of order) {
          const i = sides.indexOf(side);
          await up(side, urls[i] as string, Number(process.env.BENCH_SERVED_PORT ?? 3391) + i);
        }
      }
      for (const cell of CELLS) {
        for (const side of order) {
          const m = await measure(side, cell);
          const key = `${side.name}|${cell.label}`;
          const r = readings.get(key) ?? { p50: [], rps: [], main: [], all: [] };
          r.p50.push(m.p50);
          r.rps.push(m.rps);
          r.main.push(m.main);
          r.all.push(m.all);
          readings.set(key, r);
        }
      }
      console.log(`round ${round + 1}/${ROUNDS} done (order: ${order.map((s) => s.name).join(", ")})`);
    }
    report(sides, readings);
    console.log(
      `\n(${ROUNDS} rounds × ${ACTIONS} actions a cell, ${RESTART ? "fresh processes each round" : "one process per side"}, medians of the rounds; ${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)} at the end; ${pg ? "PostgreSQL" : "SQLite"}. "consistent": this side was above, or below, the base in every round and the A/A pair was not.)`,
    );
  } finally {
    for (const side of sides) await down(side);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
