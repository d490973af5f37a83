/**
 * Loads quickjs-ng (sync build) as a WebAssembly module whose linear memory is capped twice: a
 * `WebAssembly.Memory` with a `maximum`, and a gate that every growth of that memory passes
 * (Emscripten grows it through `memory.grow`). The worker uses the gate to charge each growth to
 * the run that caused it, so several runs can share one instance and still each have a hard cap.
 *
 * `runtime.setMemoryLimit` alone is no such cap: this build has no `malloc_usable_size`, so QuickJS
 * counts only a few bytes of overhead per allocation. Measured: a runtime limited to 60 MiB
 * allocated 125 `Uint8Array`s of 8 MiB before the instance maximum stopped it. It still refuses a
 * single allocation above the limit. The compiled `WebAssembly.Module` is shared, so a further
 * instance costs a few milliseconds.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import variant from "@jitl/quickjs-ng-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from "quickjs-emscripten-core";

const PAGE = 64 * 1024;
/** The Emscripten build starts with 16 MiB of linear memory. */
export const QUICKJS_INITIAL_MEMORY = 16 * 1024 * 1024;
/** Emscripten's own ceiling for this build's heap. */
export const QUICKJS_MAX_MEMORY = 2 * 1024 * 1024 * 1024;

let compiled: Promise<WebAssembly.Module> | undefined;

function compiledModule(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    const require = createRequire(import.meta.url);
    const path = require.resolve("@jitl/quickjs-ng-wasmfile-release-sync/wasm");
    return WebAssembly.compile(await readFile(path));
  })();
  return compiled;
}

export interface CappedQuickJS {
  module: QuickJSWASMModule;
  memory: WebAssembly.Memory;
  capBytes: number;
}

/** Asked before each growth of an instance's memory, and told of each growth that happened. */
export interface GrowthGate {
  /** Refusing is an out-of-memory in the guest that asked: its allocation fails. */
  allow(bytes: number): boolean;
  grew(bytes: number): void;
}

/** A fresh QuickJS WASM instance whose linear memory can never exceed `capBytes`. */
export async function loadCappedQuickJS(capBytes: number, gate?: GrowthGate): Promise<CappedQuickJS> {
  const maximum = Math.max(
    Math.floor(Math.min(capBytes, QUICKJS_MAX_MEMORY) / PAGE),
    QUICKJS_INITIAL_MEMORY / PAGE,
  );
  const memory = new WebAssembly.Memory({ initial: QUICKJS_INITIAL_MEMORY / PAGE, maximum });
  if (gate) {
    const grow = memory.grow.bind(memory);
    // Emscripten catches the throw and tries a smaller size, then reports the allocation failed.
    memory.grow = (pages: number) => {
      if (!gate.allow(pages * PAGE)) throw new RangeError("the run's memory budget is spent");
      const before = grow(pages);
      gate.grew(pages * PAGE);
      return before;
    };
  }
  const module = await newQuickJSWASMModuleFromVariant(
    newVariant(variant, { wasmModule: await compiledModule(), wasmMemory: memory }),
  );
  return { module, memory, capBytes: maximum * PAGE };
}
