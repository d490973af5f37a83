/**
 * glibc's `malloc_trim(0)`, reached through koffi (a foreign-function library whose prebuilt
 * binary comes from the npm registry as an optional dependency). After a burst, memory that
 * Node's threads freed (Prisma's and the sandbox workers' buffers, V8's off-heap parts) stays
 * in glibc's heaps: free to glibc, resident for the system. glibc gives back only the top of a
 * heap on its own; `malloc_trim` also returns the free pages in the middle.
 *
 * Measured on the `npm start` process, 30–40 s after 200 MCP clients for 60 s: the main heap
 * (`[heap]`) held 41–84 MiB against 27 MiB just started, and one trim (called by hand) took it
 * back to 19–52 MiB.
 *
 * Where there is no glibc (macOS, musl) or koffi's binary cannot load, `mallocTrim()` is undefined
 * and nothing is trimmed. It does not change what is allocated, only what the system sees as used.
 */
import { createRequire } from "node:module";

type Trim = () => number;

let loaded: Trim | null | undefined;

function load(): Trim | null {
  if (process.platform !== "linux") return null;
  try {
    // koffi is loaded only here, on the first call (the idle GC asks once, when it starts).
    const require = createRequire(import.meta.url);
    const koffi = require("koffi") as typeof import("koffi");
    const libc = koffi.load("libc.so.6");
    const trim = libc.func("int malloc_trim(size_t pad)") as (pad: number) => number;
    return () => trim(0);
  } catch {
    return null;
  }
}

/** glibc's `malloc_trim(0)` (returns 1 when memory was given back), or undefined where unavailable. */
export function mallocTrim(): Trim | undefined {
  if (loaded === undefined) loaded = load();
  return loaded ?? undefined;
}
