/**
 * Loads quickjs-ng (sync build) as a WebAssembly module whose whole linear memory is capped:
 * `runtime.setMemoryLimit` alone does not bound buffers and strings, a
 * `WebAssembly.Memory` with a `maximum` does. The compiled `WebAssembly.Module` is shared, so a
 * further instance costs a few milliseconds.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import variant from "@jitl/quickjs-ng-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from "quickjs-emscripten-core";

const PAGE = 64 * 1024;
/** The Emscripten build starts with 16 MiB of linear memory. */
export const QUICKJS_INITIAL_MEMORY = 16 * 1024 * 1024;

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

/** A fresh QuickJS WASM instance whose linear memory can never exceed `capBytes`. */
export async function loadCappedQuickJS(capBytes: number): Promise<CappedQuickJS> {
  const maximum = Math.max(Math.floor(capBytes / PAGE), QUICKJS_INITIAL_MEMORY / PAGE);
  const memory = new WebAssembly.Memory({ initial: QUICKJS_INITIAL_MEMORY / PAGE, maximum });
  const module = await newQuickJSWASMModuleFromVariant(
    newVariant(variant, { wasmModule: await compiledModule(), wasmMemory: memory }),
  );
  return { module, memory, capBytes };
}
