/**
 * Builds a library's guest module: esbuild bundles a small entry over an installed package into
 * one self-contained ES module (it imports nothing, so the sandbox's loader has nothing to
 * resolve), once per process. Node built-ins a package only reaches on a Node-only path
 * (papaparse's stream input) stay unresolved and throw if that path is taken in the guest.
 */
import { createRequire } from "node:module";
import { join } from "node:path";

const cache = new Map<string, string>();

export function bundleLibrary(name: string, entry: string, nodeOnly: string[] = []): string {
  const known = cache.get(name);
  if (known !== undefined) return known;
  const root = process.cwd();
  // Loaded at run time, so the Next build never bundles esbuild's native binary.
  const esbuild = createRequire(join(root, "package.json"))("esbuild") as typeof import("esbuild");
  const result = esbuild.buildSync({
    stdin: { contents: entry, resolveDir: root, loader: "js", sourcefile: `toolstore-lib-${name}.js` },
    bundle: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    target: "es2020",
    minify: true,
    legalComments: "none",
    external: nodeOnly,
    write: false,
    logLevel: "silent",
  });
  const code = result.outputFiles[0]?.text;
  if (!code) throw new Error(`esbuild produced no output for library ${name}`);
  cache.set(name, code);
  return code;
}
