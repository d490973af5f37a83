import { describe, expect, it } from "vitest";
import { groupByModule } from "./group-by-module";

describe("groupByModule", () => {
  it("keeps first-appearance order of modules and of items within one", () => {
    const items = [
      { module: "http", name: "http.fetch" },
      { module: "fs", name: "fs.read" },
      { module: "http", name: "http.post" },
    ];
    expect(groupByModule(items)).toEqual([
      ["http", [items[0], items[2]]],
      ["fs", [items[1]]],
    ]);
  });

  it("gives nothing for nothing", () => {
    expect(groupByModule([])).toEqual([]);
  });
});
