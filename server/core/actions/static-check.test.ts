import { describe, expect, it } from "vitest";
import { checkActionSource } from "./static-check";

const mounted = { weather: ["get_weather", "forecast"], store: ["list", "search", "info", "execute"] };

describe("static import check", () => {
  it("accepts static imports of mounted modules and listed exports", () => {
    const result = checkActionSource(
      'import { get_weather } from "toolstore/weather";\nimport * as store from "toolstore/store";\nexport default async () => get_weather({ location: "Oslo" });',
      mounted,
    );
    expect(result).toEqual({ ok: true, imports: { weather: ["get_weather"], store: ["*"] } });
  });

  it.each([
    [
      'import { x } from "toolstore/wether";\nexport default () => 1',
      /module "toolstore\/wether" is not mounted.*did you mean "toolstore\/weather"/,
    ],
    [
      'import { get_wether } from "toolstore/weather";\nexport default () => 1',
      /no export "get_wether" \(did you mean "get_weather"\?\)/,
    ],
    ['import w from "toolstore/weather";\nexport default () => 1', /has no default export/],
    ['import fs from "node:fs";\nexport default () => 1', /only "toolstore\/<module>" imports/],
    ['export { forecast2 } from "toolstore/weather";\nexport default () => 1', /no export "forecast2"/],
    ['export * from "node:os";\nexport default () => 1', /not allowed/],
    [
      "export default async () => import('toolstore/weather')",
      /dynamic import\(\) \(line 1:\d+\) is not allowed/,
    ],
    ["export default () => { const f = async () => { if (1) { return import(x) } } }", /dynamic import/],
    ["export const run = () => 1;", /no default export; write: export default async function/],
    ["export default (", /SyntaxError/],
    ["", /empty/],
  ])("refuses %j", (code, message) => {
    const result = checkActionSource(code, mounted);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(message);
  });

  it("reports every problem at once", () => {
    const result = checkActionSource(
      'import { a } from "toolstore/weather";\nimport { b } from "toolstore/nope";',
      mounted,
    );
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems).toHaveLength(3);
  });

  it("accepts export { x as default } and refuses oversized code", () => {
    expect(checkActionSource("const main = () => 1;\nexport { main as default };", mounted).ok).toBe(true);
    expect(checkActionSource(`export default () => 1; //${"x".repeat(100)}`, mounted, 50).ok).toBe(false);
  });
});
