import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { servingEnv, servingNodeFlags } from "./serving-env";

describe("the serving process's flags and environment", () => {
  it("caps V8's heap growth, keeps the starter's flags, and lets the operator's own value win", () => {
    expect(servingNodeFlags()).toEqual(["--heap-growing-percent=25"]);
    expect(servingNodeFlags(["--expose-gc"])).toEqual(["--expose-gc", "--heap-growing-percent=25"]);
    expect(servingNodeFlags(["--heap-growing-percent=80"])).toEqual(["--heap-growing-percent=80"]);
    expect(servingNodeFlags(["--heap_growing_percent=80"])).toEqual(["--heap_growing_percent=80"]);
  });

  it("names flags this Node accepts (it refuses to start on a flag it does not know)", () => {
    const out = execFileSync(process.execPath, [...servingNodeFlags(), "-p", "process.execArgv[0]"], {
      encoding: "utf8",
    });
    expect(out.trim()).toBe("--heap-growing-percent=25");
  });

  it("sets two malloc arenas unless the operator chose", () => {
    expect(servingEnv({ NODE_ENV: "production" }).MALLOC_ARENA_MAX).toBe("2");
    expect(servingEnv({ NODE_ENV: "production", MALLOC_ARENA_MAX: "8" }).MALLOC_ARENA_MAX).toBe("8");
  });
});
