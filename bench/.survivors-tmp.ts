import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { connect, load, ONE_CALL, startServed, stop } from "./served.bench";
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "surv-"));
fs.writeFileSync(path.join(dir, "memory.jsonl"), "");
const served = await startServed("toolstore", { BENCH_DATABASE_URL: `file:${path.join(dir, "s.db")}`, BENCH_ACTION_TIMEOUT_MS: "10000", BENCH_MEMORY_FILE: path.join(dir, "memory.jsonl") });
const client = await connect(served, served.keys.a);
try {
  await load([client], 2000, ONE_CALL);
  await fetch(`${served.url}/__bench/alloc?start&survivors`);
  await load([client], 1500, ONE_CALL);
  const { profile } = (await (await fetch(`${served.url}/__bench/alloc?stop`)).json()) as any;
  const byKey = new Map<string, number>();
  let total = 0;
  const walk = (node: any, stack: string[]) => {
    const f = node.callFrame;
    const here = `${f.functionName || "(anon)"} ${String(f.url).replace(/^.*\/(node_modules|main)\//, "")}:${f.lineNumber + 1}`;
    const s = [...stack, here];
    if (node.selfSize > 0) {
      total += node.selfSize;
      const key = s.slice(-6).join(" < ");
      byKey.set(key, (byKey.get(key) ?? 0) + node.selfSize);
    }
    for (const c of node.children ?? []) walk(c, s);
  };
  walk(profile.head, []);
  console.log(`survivor bytes per action: ${(total / 1500 / 1024).toFixed(1)} KiB`);
  for (const [k, v] of [...byKey].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${(v / 1500).toFixed(0).padStart(7)} B  ${k.split(" < ").reverse().join(" < ")}`);
} finally {
  await client.close();
  await stop(served);
}
