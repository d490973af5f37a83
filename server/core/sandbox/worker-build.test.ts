/** The sandbox worker's bundle cache: old bundles go, the one in use and recent ones stay. */
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUNDLE_UNUSED_MS, bundledWorkerEntry, pruneBundles } from "./worker-build";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function cacheWith(files: Record<string, number>): string {
  const dir = mkdtempSync(join(tmpdir(), "toolstore-bundles-"));
  dirs.push(dir);
  for (const [name, ageMs] of Object.entries(files)) {
    const file = join(dir, name);
    writeFileSync(file, "export {};\n");
    const at = new Date(Date.now() - ageMs);
    utimesSync(file, at, at);
  }
  return dir;
}

describe("pruneBundles", () => {
  it("removes bundles unused for a week, never the one in use, recent ones or other files", () => {
    const week = BUNDLE_UNUSED_MS;
    const dir = cacheWith({
      "sandbox-worker-00000000000000aa.mjs": week + 60_000,
      "sandbox-worker-00000000000000bb.mjs": week + 60_000,
      "sandbox-worker-00000000000000cc.mjs": week - 60_000,
      "sandbox-worker-00000000000000dd.mjs.1234.tmp": week + 60_000,
      "notes.txt": week * 4,
    });
    const removed = pruneBundles(dir, join(dir, "sandbox-worker-00000000000000bb.mjs"));
    expect(removed.sort()).toEqual([
      "sandbox-worker-00000000000000aa.mjs",
      "sandbox-worker-00000000000000dd.mjs.1234.tmp",
    ]);
    expect(readdirSync(dir).sort()).toEqual([
      "notes.txt",
      "sandbox-worker-00000000000000bb.mjs",
      "sandbox-worker-00000000000000cc.mjs",
    ]);
  });
});

describe("bundledWorkerEntry", () => {
  it("writes its bundle again when another process removed it, and prunes old ones beside it", () => {
    const dir = cacheWith({ "sandbox-worker-00000000000000aa.mjs": BUNDLE_UNUSED_MS + 60_000 });
    const entry = join(import.meta.dirname, "worker-main.ts");
    const first = bundledWorkerEntry(entry, dir);
    expect(first).toMatch(/sandbox-worker-[0-9a-f]{16}\.mjs$/);
    expect(readdirSync(dir)).toEqual([basename(first as string)]);
    rmSync(first as string);
    expect(bundledWorkerEntry(entry, dir)).toBe(first);
    expect(existsSync(first as string)).toBe(true);
  });
});
