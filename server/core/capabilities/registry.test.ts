import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { createCanaryModule, testSession } from "../testing/fixtures";
import { createCapabilityRegistry, validateCapabilityModule } from "./registry";
import type { CapabilityModule } from "./types";

function moduleWithCategory(category: unknown): CapabilityModule {
  return {
    name: "notes",
    description: "",
    source: "toolset",
    versionHash: "h1",
    exports: [
      {
        spec: {
          name: "notes.save",
          description: "",
          inputSchema: { type: "object" },
          category: category as "write",
        },
        impl: async () => null,
      },
    ],
  };
}

describe("capability registry", () => {
  it("registering an export without a category throws CATEGORY_REQUIRED", () => {
    for (const bad of [undefined, "", "dangerous"]) {
      let error: unknown;
      try {
        createCapabilityRegistry({ builtins: [moduleWithCategory(bad)] });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("CATEGORY_REQUIRED");
    }
  });

  it("refuses malformed names", () => {
    const bad = moduleWithCategory("write");
    const first = bad.exports[0];
    if (first) first.spec = { ...first.spec, name: "other.save" };
    expect(() => validateCapabilityModule(bad)).toThrow(/must be named "notes/);
  });

  it("uses the stored category over the declared one, and keeps the declared one visible", async () => {
    const registry = createCapabilityRegistry({
      builtins: [],
      sources: [{ id: "db", listModules: async () => [moduleWithCategory("write")] }],
      categories: async () => new Map([["notes.save", "execute"]]),
    });
    const cap = await registry.resolve("notes.save");
    expect(cap?.spec.category).toBe("execute");
    expect(cap?.declaredCategory).toBe("write");
  });

  it("a source module with a bad category or a stored unknown category is left out, not defaulted", async () => {
    const registry = createCapabilityRegistry({
      builtins: [createCanaryModule()],
      sources: [
        { id: "db", listModules: async () => [moduleWithCategory(undefined)] },
        { id: "broken", listModules: async () => Promise.reject(new Error("db down")) },
      ],
      categories: async () => new Map([["canary.read", "whatever"]]),
    });
    const modules = await registry.modules();
    expect(modules.map((m) => m.name)).toEqual([]);
    expect(
      registry
        .problems()
        .map((p) => p.source)
        .sort(),
    ).toEqual(["broken", "builtin", "db"]);
  });

  it("mounts modules per session", async () => {
    const registry = createCapabilityRegistry({ builtins: [createCanaryModule()] });
    expect(await registry.mountedModules(testSession({ mountedModules: ["*"] }))).toHaveLength(1);
    expect(await registry.mountedModules(testSession({ mountedModules: ["store"] }))).toHaveLength(0);
    await expect(
      registry.resolveMounted(testSession({ mountedModules: [] }), "canary.read"),
    ).rejects.toMatchObject({
      code: "CAPABILITY_UNKNOWN",
    });
  });

  it("caches source results briefly and can be invalidated", async () => {
    let calls = 0;
    const registry = createCapabilityRegistry({
      builtins: [],
      sources: [
        {
          id: "db",
          listModules: async () => {
            calls += 1;
            return [moduleWithCategory("write")];
          },
        },
      ],
      cacheMs: 60_000,
    });
    await registry.modules();
    await registry.modules();
    expect(calls).toBe(1);
    registry.invalidate();
    await registry.modules();
    expect(calls).toBe(2);
  });
});
