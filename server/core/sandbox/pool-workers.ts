/**
 * Starting the pool's worker threads: where worker-main is (a bundle built from it, the .ts file
 * through tsx, or a compiled entry), the bootstrap that loads it, and a fresh slot per worker with
 * its watchdog buffer. What the worker says and how it ends is the pool's business (pool.ts).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve as resolvePath } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { Slot } from "./pool-jobs";
import { type FromWorkerPost, WATCHDOG_BYTES, type WorkerInit } from "./protocol";
import { bundledWorkerEntry } from "./worker-build";
import { WORKER_YOUNG_GENERATION_MB } from "./worker-reclaim";

export interface WorkerSpawnOptions {
  /** Path to worker-main.ts (or a compiled .js/.mjs). Default: found next to this file or under the cwd. */
  workerEntry?: string;
  warmModules?: number;
  idleModuleMs?: number;
  retireAboveBytes?: number;
  runtimesPerModule?: number;
  /** Worker JS heap limit in MiB. Default 256. */
  workerHeapMb?: number;
}

export interface WorkerEvents {
  message(slot: Slot, post: FromWorkerPost): void;
  exit(slot: Slot, code: number): void;
}

const WORKER_BOOTSTRAP = `
const { workerData } = require("node:worker_threads");
(async () => {
  if (workerData.entry.endsWith(".ts")) {
    const api = await import(workerData.tsxApi);
    api.register();
  }
  await import(workerData.entryUrl);
})().catch((error) => {
  setImmediate(() => { throw error; });
});
`;

/** A function that starts one worker for `key` (or for no key yet) and returns its slot. */
export function createWorkerSpawner(
  options: WorkerSpawnOptions,
  events: WorkerEvents,
): (key: string | undefined) => Slot {
  const source = findWorkerEntry(options.workerEntry);
  const entryFor = () => (source.endsWith(".ts") ? (bundledWorkerEntry(source) ?? source) : source);
  let entry = entryFor();
  const tsxApi = findTsxApi();

  return (key) => {
    // A bundle pruned by a newer process while this one ran for a week is written again.
    if (entry !== source && !existsSync(entry)) entry = entryFor();
    const sab = new SharedArrayBuffer(WATCHDOG_BYTES);
    const init: WorkerInit & { entry: string; entryUrl: string; tsxApi: string } = {
      watchdog: sab,
      warmModules: options.warmModules ?? 4,
      idleModuleMs: options.idleModuleMs ?? 10_000,
      retireAboveBytes: options.retireAboveBytes ?? 32 * 1024 * 1024,
      runtimesPerModule: Math.max(1, options.runtimesPerModule ?? 16),
      entry,
      entryUrl: pathToFileURL(entry).href,
      tsxApi,
    };
    const worker = new Worker(WORKER_BOOTSTRAP, {
      eval: true,
      workerData: init,
      resourceLimits: {
        stackSizeMb: 8,
        maxOldGenerationSizeMb: options.workerHeapMb ?? 256,
        maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB,
      },
      stdout: false,
      stderr: false,
    });
    let markReady: () => void = () => {};
    const slot: Slot = {
      worker,
      key,
      jobs: new Map(),
      computing: new Set(),
      idleSince: Date.now(),
      watchdogDeadline: new Float64Array(sab, 0, 1),
      watchdogIds: new Int32Array(sab),
      alive: true,
      isReady: false,
      codes: new Set(),
      ready: new Promise<void>((r) => {
        markReady = r;
      }),
      markReady: () => markReady(),
    };
    worker.on("message", (post: FromWorkerPost) => events.message(slot, post));
    worker.on("error", (error) => {
      // 'exit' follows and settles the jobs; keep the reason for their error message.
      slot.lastError = error.message;
    });
    worker.on("exit", (code) => events.exit(slot, code));
    return slot;
  };
}

function findWorkerEntry(explicit?: string): string {
  if (explicit) return explicit;
  const candidates: string[] = [];
  try {
    candidates.push(join(dirname(fileURLToPath(import.meta.url)), "worker-main.ts"));
  } catch {
    // import.meta.url is not a file URL (bundled); fall through to the cwd.
  }
  candidates.push(resolvePath(process.cwd(), "server/core/sandbox/worker-main.ts"));
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`sandbox worker entry not found (looked in ${candidates.join(", ")})`);
  return found;
}

/** tsx's ESM API, which lets the worker load worker-main.ts. Bundlers mangle some of these lookups. */
function findTsxApi(): string {
  try {
    const resolved = import.meta.resolve?.("tsx/esm/api");
    if (resolved) return resolved;
  } catch {
    // Not supported here (some test runners, bundles); try the package folder.
  }
  try {
    const pkg = createRequire(import.meta.url).resolve("tsx/package.json");
    return pathToFileURL(join(dirname(pkg), "dist/esm/api/index.mjs")).href;
  } catch {
    // Bundled: fall through to the project's node_modules.
  }
  const local = resolvePath(process.cwd(), "node_modules/tsx/dist/esm/api/index.mjs");
  return existsSync(local) ? pathToFileURL(local).href : "tsx/esm/api";
}
