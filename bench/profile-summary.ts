/**
 * `npx tsx bench/profile-summary.ts <dir or .cpuprofile files> [--top N] [--pid P] [--skip S]
 * [--per N] [--callers fn]`: where the time
 * of a `node --cpu-prof` run went, per thread (one profile per thread): self time by area (Next.js,
 * Prisma, the MCP SDK, QuickJS, ToolStore's own layers, GC, idle) and the top functions by self
 * time. For the served bench: BENCH_PROFILE_DIR=<dir> makes the `npm start` process write them.
 */
import fs from "node:fs";
import { SourceMap } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const AREAS: [string, RegExp][] = [
  ["next.js", /node_modules\/next\/|\/react-dom\/|node_modules\/react\/|\[turbopack\]|\/\.next\//],
  ["prisma", /@prisma\/|\/server\/db\/generated\/|prisma/],
  ["better-sqlite3 / pg", /better-sqlite3|node_modules\/pg/],
  ["mcp sdk", /@modelcontextprotocol\/sdk/],
  ["zod / ajv", /node_modules\/(zod|ajv)/],
  ["quickjs (wasm + glue)", /quickjs|wasm:\/\/|emscripten/],
  ["toolstore server/core", /server\/core\//],
  ["toolstore server/infra+db", /server\/(infra|db)\//],
  ["toolstore server/mcp", /server\/mcp\//],
  ["toolstore server (other)", /\/server\/(?!chunks)/],
  ["toolstore app/ and proxy", /\/app\/|proxy\.ts/],
  ["tsx loader", /node_modules\/tsx\//],
  ["node internals", /^node:|^internal\//],
];

const maps = new Map<string, SourceMap | null>();
/** A bundled frame (Next's .next chunks) as its original source file, through the chunk's .map. */
function originalUrl(frame: ProfileNode["callFrame"]): string {
  if (!frame.url.includes("/.next/")) return frame.url;
  let map = maps.get(frame.url);
  if (map === undefined) {
    try {
      const file = frame.url.startsWith("file:") ? fileURLToPath(frame.url) : frame.url;
      map = new SourceMap(JSON.parse(fs.readFileSync(`${file}.map`, "utf8")));
    } catch {
      map = null;
    }
    maps.set(frame.url, map);
  }
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber) as
    | { originalSource?: string }
    | undefined;
  return entry?.originalSource ? `bundled:${entry.originalSource}` : frame.url;
}

function area(node: ProfileNode): string {
  const { functionName } = node.callFrame;
  const url = originalUrl(node.callFrame);
  if (functionName === "(garbage collector)") return "GC";
  if (functionName === "(idle)") return "idle";
  if (functionName === "(program)") return "program (native, unattributed)";
  for (const [name, re] of AREAS) if (re.test(url)) return name;
  if (!url) return "native / builtins";
  return `other: ${url
    .replace(/^.*node_modules\//, "")
    .split("/")
    .slice(0, 2)
    .join("/")}`;
}

/** `skipS`: leave out the first seconds of the profile (the start: module loading, compiles). */
function summarize(file: string, top: number, skipS: number, per: number): void {
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const from = profile.startTime + skipS * 1e6;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < from) continue;
    const id = profile.samples[i] as number;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const totalUs = profile.endTime - Math.max(profile.startTime, from);
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  for (const [id, us] of self) {
    const node = byId.get(id) as ProfileNode;
    const a = area(node);
    areas.set(a, (areas.get(a) ?? 0) + us);
    const { functionName, lineNumber } = node.callFrame;
    const url = originalUrl(node.callFrame);
    const key = `${functionName || "(anonymous)"} ${url.replace(/^.*\/(node_modules|speed|\.next)\//, "").replace(/^bundled:.*?(node_modules|server|app)\//, "$1/")}${url.startsWith("bundled:") ? "" : `:${lineNumber + 1}`}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
  }
  const busy = totalUs - (areas.get("idle") ?? 0);
  if (callersOf) {
    // Who spends the self time of functions named `callersOf`: their stacks, 4 frames up.
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const stacks = new Map<string, number>();
    for (const [id, us] of self) {
      const node = byId.get(id) as ProfileNode;
      if (node.callFrame.functionName !== callersOf) continue;
      const frames: string[] = [];
      for (let p = parent.get(id); p !== undefined && frames.length < 4; p = parent.get(p)) {
        const f = (byId.get(p) as ProfileNode).callFrame;
        frames.push(
          `${f.functionName || "(anon)"}@${originalUrl(f).split("/").slice(-1)[0]}:${f.lineNumber + 1}`,
        );
      }
      const key = frames.join(" < ");
      stacks.set(key, (stacks.get(key) ?? 0) + us);
    }
    console.log(`\n### callers of ${callersOf}\n`);
    for (const [k, us] of [...stacks].sort((x, y) => y[1] - x[1]).slice(0, 12)) {
      console.log(`${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
    }
  }
  const pct = (us: number) => `${((us / busy) * 100).toFixed(1)}%`;
  // With --per N (the actions served in the window), times are also shown per action.
  const each = (us: number) => (per > 0 ? ` | ${(us / 1000 / per).toFixed(3)}` : "");
  const perHead = per > 0 ? " | ms per action" : "";
  console.log(
    `\n## ${path.basename(file)}: ${(totalUs / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(2)} s busy${per > 0 ? ` (${(busy / 1000 / per).toFixed(2)} ms per action)` : ""}\n`,
  );
  console.log(`| area | self ms | of busy${perHead} |\n|---|---|---|${per > 0 ? "---|" : ""}`);
  for (const [a, us] of [...areas].sort((x, y) => y[1] - x[1])) {
    if (a !== "idle" && us >= 1000)
      console.log(`| ${a} | ${(us / 1000).toFixed(0)} | ${pct(us)}${each(us)} |`);
  }
  console.log(`\n| function (self) | ms | of busy${perHead} |\n|---|---|---|${per > 0 ? "---|" : ""}`);
  for (const [f, us] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, top)) {
    if (!f.startsWith("(idle)"))
      console.log(`| ${f.slice(0, 110)} | ${(us / 1000).toFixed(0)} | ${pct(us)}${each(us)} |`);
  }
}

const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt >= 0 ? Number(args[topAt + 1]) : 25;
const pidAt = args.indexOf("--pid");
const pid = pidAt >= 0 ? args[pidAt + 1] : undefined;
const skipAt = args.indexOf("--skip");
const skip = skipAt >= 0 ? Number(args[skipAt + 1]) : 0;
const perAt = args.indexOf("--per");
const per = perAt >= 0 ? Number(args[perAt + 1]) : 0;
const callersAt = args.indexOf("--callers");
const callersOf = callersAt >= 0 ? args[callersAt + 1] : undefined;
const values = new Set([topAt, pidAt, skipAt, perAt, callersAt].filter((i) => i >= 0).map((i) => i + 1));
const inputs = args.filter((a, i) => !a.startsWith("--") && !values.has(i));
const files = inputs.flatMap((input) =>
  fs.statSync(input).isDirectory()
    ? fs
        .readdirSync(input)
        .filter((f) => f.endsWith(".cpuprofile") && (!pid || f.includes(`.${pid}.`)))
        .sort()
        .map((f) => path.join(input, f))
    : [input],
);
if (files.length === 0) console.error("no .cpuprofile files given or found");
for (const file of files) summarize(file, top, skip, per);
