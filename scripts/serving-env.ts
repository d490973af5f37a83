/**
 * The environment of the process that serves ToolStore (`npm start` and the served benches start
 * it with this). glibc gives each thread that allocates its own malloc arena, up to eight per
 * core; the serving process has about sixteen threads (the sandbox and SQLite workers, libuv's
 * pool), and memory freed in one arena is rarely given back to the system. After a burst of
 * 10,000 actions that parked, RSS stayed 118 MiB higher with glibc's default and 25.5 and 62.5 MiB
 * (two runs) with two arenas, at the same speed (durable bench). The operator's own
 * MALLOC_ARENA_MAX wins.
 */
export function servingEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { MALLOC_ARENA_MAX: "2", ...base };
}
