import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * In a process of its own (RSS is the whole process's): 200 MB of small native allocations, all
 * but one in a thousand freed. glibc keeps the freed pages, because live blocks sit above them;
 * one trim gives them back.
 */
const SCENARIO = `
import { mallocTrim } from ${JSON.stringify(path.join(import.meta.dirname, "malloc-trim.ts"))};
const rss = () => process.memoryUsage().rss;
let blocks = Array.from({ length: 200_000 }, () => Buffer.allocUnsafeSlow(1000));
const kept = blocks.filter((_, i) => i % 1000 === 999);
const full = rss();
blocks = null;
gc();
await new Promise((r) => setTimeout(r, 200));
gc();
const freed = rss();
const trim = mallocTrim();
const returned = trim ? trim() : null;
console.log(JSON.stringify({ full, freed, trimmed: rss(), returned, kept: kept.length }));
`;

describe("malloc_trim", () => {
  it.runIf(process.platform === "linux")(
    "gives a burst's freed native memory back to the system, which glibc alone keeps",
    () => {
      const out = execFileSync(
        process.execPath,
        ["--expose-gc", "--import", "tsx", "--input-type=module", "-e", SCENARIO],
        { encoding: "utf8", env: { ...process.env, MALLOC_ARENA_MAX: "1" } },
      );
      const { full, freed, trimmed, returned } = JSON.parse(out.trim().split("\n").pop() as string);
      const MiB = 1024 * 1024;
      expect(returned).toBe(1);
      // Freed but still resident: what the idle collection alone leaves.
      expect(full - freed).toBeLessThan(50 * MiB);
      expect(freed - trimmed).toBeGreaterThan(150 * MiB);
    },
  );
});
