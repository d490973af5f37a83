/**
 * `npm test`: the whole suite, in the order that fails fastest — lint and format, type check,
 * unit tests (vitest), a production build when sources changed, then the Playwright suite in
 * Debian's Chromium against the built app.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { buildIsCurrent, writeBuildStamp } from "./build-stamp";

const root = path.resolve(import.meta.dirname, "..");
const bin = (name: string) => path.join(root, "node_modules", ".bin", name);

function step(label: string, command: string, args: string[]) {
  const started = Date.now();
  console.log(`\n▶ ${label}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.status !== 0) {
    console.error(`\n✖ ${label} failed after ${seconds}s`);
    process.exit(result.status ?? 1);
  }
  console.log(`✔ ${label} (${seconds}s)`);
}

step("lint and format (biome)", bin("biome"), ["check", "."]);
step("type check (tsc)", bin("tsc"), ["--noEmit", "-p", "."]);
step("unit tests (vitest)", bin("vitest"), ["run"]);
if (!buildIsCurrent(root)) {
  step("build (next build)", bin("next"), ["build"]);
  writeBuildStamp(root);
}
step("end-to-end tests (playwright, chromium)", bin("playwright"), ["test"]);
console.log("\nall tests passed");
