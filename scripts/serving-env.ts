/**
 * The environment and Node flags of the process that serves ToolStore (`npm start` and the served
 * benches start it with these).
 */

/**
 * glibc gives each thread that allocates its own malloc arena, up to eight per core; the serving
 * process has about sixteen threads (the sandbox and SQLite workers, libuv's pool), and memory
 * freed in one arena is rarely given back to the system. After a burst of 10,000 actions that
 * parked, RSS stayed 118 MiB higher with glibc's default and 25.5 and 62.5 MiB (two runs) with two
 * arenas, at the same speed (durable bench). The operator's own MALLOC_ARENA_MAX wins.
 */
export function servingEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { MALLOC_ARENA_MAX: "2", ...base };
}

/**
 * How far V8 lets a heap grow past what its last full collection kept before it collects again.
 * V8 picks the factor itself, up to 4× when collections look cheap: under 200 MCP clients the main
 * thread kept about 165 MiB and its heap grew to 640 MiB between two collections, and the process
 * peaked at 1,037 MiB, 3.5× its idle RSS. At 25% it peaked at 564–592 MiB (three runs), at 50% at
 * 614 and at 100% at 697, with the same throughput within the machine's noise (served bench,
 * `clients` section).
 */
const HEAP_GROWTH_FLAG = "--heap-growing-percent";
const HEAP_GROWTH_PERCENT = 25;

/** Node flags for the serving process: `given` (the starter's own), plus ours unless `given` sets them. */
export function servingNodeFlags(given: readonly string[] = []): string[] {
  const flags = [...given];
  // V8 reads `--heap_growing_percent` and `--heap-growing-percent` alike.
  const named = (flag: string) => given.some((arg) => arg.split("=")[0]?.replace(/_/g, "-") === flag);
  if (!named(HEAP_GROWTH_FLAG)) flags.push(`${HEAP_GROWTH_FLAG}=${HEAP_GROWTH_PERCENT}`);
  return flags;
}
