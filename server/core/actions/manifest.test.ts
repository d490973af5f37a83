import { describe, expect, it } from "vitest";
import { readActionManifest } from "./manifest";

describe("readActionManifest", () => {
  it("lists imports and every call site of an imported capability with its line", () => {
    const code = [
      'import { evaluate } from "toolstore/calculator";',
      'import * as assets from "toolstore/assets";',
      'import { fetch as get } from "toolstore/http";',
      "",
      "export default async function () {",
      '  const { value } = await evaluate({ expression: "1+1" });',
      "  for (const u of ['a', 'b']) await get({ url: u });",
      "  const local = () => 1; local();",
      "  await assets.save({ data_base64: '' });",
      "  return value;",
      "}",
    ].join("\n");
    const m = readActionManifest(code);
    expect(m.parseError).toBeNull();
    expect(m.imports).toEqual([
      { module: "calculator", names: ["evaluate"] },
      { module: "assets", names: ["*"] },
      { module: "http", names: ["fetch"] },
    ]);
    expect(m.callSites).toEqual([
      { capability: "calculator.evaluate", line: 6 },
      { capability: "http.fetch", line: 7 },
      { capability: "assets.save", line: 9 },
    ]);
  });

  it("reports a parse error instead of throwing", () => {
    const m = readActionManifest("export default async function ( {");
    expect(m.parseError).toMatch(/Unexpected/);
    expect(m.imports).toEqual([]);
  });
});
