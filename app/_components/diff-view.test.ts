import { createTwoFilesPatch } from "diff";
import { describe, expect, it } from "vitest";
import { diffLineKind, patchLines } from "./diff-view";

describe("diffLineKind", () => {
  it("reads what a line does from its first characters", () => {
    expect(diffLineKind("+ farewell [read]")).toBe("add");
    expect(diffLineKind("- hello [read]")).toBe("del");
    expect(diffLineKind("~ add signature:")).toBe("mod");
    expect(diffLineKind("@@ -1,2 +1,2 @@")).toBe("hunk");
    expect(diffLineKind("  unchanged")).toBe("same");
    expect(diffLineKind("")).toBe("same");
  });
});

describe("patchLines", () => {
  it("drops the file header of a patch the server makes and keeps every hunk", () => {
    const before = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"].join("\n");
    const after = before.replace("b", "B").replace("j", "J");
    const patch = createTwoFilesPatch("v1/SKILL.md", "v2/SKILL.md", before, after, "", "", { context: 1 });
    const lines = patchLines(patch);
    expect(lines[0]).toMatch(/^@@ /);
    expect(lines.filter((l) => l.startsWith("@@"))).toHaveLength(2);
    expect(lines).toContain("-b");
    expect(lines).toContain("+B");
    expect(lines.some((l) => l.startsWith("---") || l.startsWith("+++") || l.startsWith("==="))).toBe(false);
  });

  it("gives no lines for a patch without hunks", () => {
    expect(patchLines(createTwoFilesPatch("a", "b", "same\n", "same\n"))).toEqual([]);
  });
});
