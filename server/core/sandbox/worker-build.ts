/**
 * The sandbox worker's entry as plain JavaScript: worker-main.ts and its local imports bundled by
 * esbuild into one ES module (packages stay imports), written once per content under the
 * project's node_modules/.cache. A worker that loads it needs no TypeScript loader: measured, a
 * worker costs about 13 MiB of RSS this way against 31 MiB through tsx, and starts sooner. Any
 * failure (no esbuild, a read-only folder) leaves the caller on the .ts entry through tsx.
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { join, sep } from "node:path";

const built = new Map<string, string | undefined>();

/** A bundle no process has started with for this long is removed (each code change writes one). */
export const BUNDLE_UNUSED_MS = 7 * 24 * 60 * 60 * 1000;
const BUNDLE_NAME = /^sandbox-worker-[0-9a-f]{16}\.mjs(\.\d+\.tmp)?$/;

/**
 * Removes the bundles in `dir` other than `keep` that were last used (written, or touched by a
 * process starting with them) more than `unusedMs` ago. Returns the names removed. A process
 * still running on a removed bundle writes it again before its next worker (bundledWorkerEntry).
 */
export function pruneBundles(
  dir: string,
  keep: string,
  unusedMs = BUNDLE_UNUSED_MS,
  now = Date.now(),
): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    if (file === keep || !BUNDLE_NAME.test(name)) continue;
    try {
      if (now - statSync(file).mtimeMs <= unusedMs) continue;
      unlinkSync(file);
      removed.push(name);
    } catch {
      // Gone already, or not ours to remove: either way nothing to do.
    }
  }
  return removed;
}

/**
 * The bundle of `tsEntry`, written if missing; undefined when it cannot be built (use tsx).
 * `cacheDir` (tests): another folder than the one beside the packages.
 */
export function bundledWorkerEntry(tsEntry: string, cacheDir?: string): string | undefined {
  const memo = `${tsEntry}\0${cacheDir ?? ""}`;
  const known = built.get(memo);
  // Another process may have pruned it since (after a week unused): then it is written again.
  if (built.has(memo) && (known === undefined || existsSync(known))) return known;
  let out: string | undefined;
  try {
    const require = createRequire(tsEntry);
    // Loaded at run time, so the Next build never bundles esbuild's native binary.
    const esbuild = require("esbuild") as typeof import("esbuild");
    const result = esbuild.buildSync({
      entryPoints: [tsEntry],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      packages: "external",
      write: false,
      logLevel: "silent",
    });
    const code = result.outputFiles[0]?.text;
    if (code) {
      // Next to the packages it imports, so they resolve from the bundle as from the source.
      const pkg = require.resolve("quickjs-emscripten-core");
      const marker = `${sep}node_modules${sep}`;
      const at = pkg.lastIndexOf(marker);
      if (at < 0) throw new Error(`quickjs-emscripten-core is not under a node_modules folder: ${pkg}`);
      const dir = cacheDir ?? join(pkg.slice(0, at + marker.length), ".cache", "toolstore");
      const hash = createHash("sha256").update(code).digest("hex").slice(0, 16);
      const file = join(dir, `sandbox-worker-${hash}.mjs`);
      if (!existsSync(file)) {
        mkdirSync(dir, { recursive: true });
        const partial = `${file}.${process.pid}.tmp`;
        writeFileSync(partial, code);
        renameSync(partial, file);
      }
      out = file;
      try {
        // In use: a process that starts with it keeps it from being pruned for another week.
        const now = new Date();
        utimesSync(file, now, now);
        pruneBundles(dir, file);
      } catch {
        // Housekeeping only: a read-only folder still serves the bundle it has.
      }
    }
  } catch {
    out = undefined;
  }
  built.set(memo, out);
  return out;
}
