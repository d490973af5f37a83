import { describe, expect, it } from "vitest";
import { compileToolset } from "./compile-toolset";
import { diffToolsetVersions, formatToolsetDiff } from "./diff-toolset";

function version(source: string, doc = "get_weather forecast") {
  return compileToolset({ name: "weather", files: { doc, source } }, { typecheck: false });
}

const V1 = `/**
 * @hosts api.example.com
 */
/** Current weather.
 * @tool read */
export function get_weather(location: string) { return location; }
/** Old thing.
 * @tool read */
export function legacy() { return 1; }
`;

const V2 = `/**
 * @hosts api.example.com, api2.example.com
 * @timeout 4000
 * @secret API_KEY token
 */
/** Current weather.
 * @tool external */
export function get_weather(location: string, unit: "c" | "f" = "c") { return location + unit; }
/** Forecast.
 * @tool external */
export function forecast(location: string, days = 3) { return [location, days]; }
`;

describe("[TOOLSETS] diff between versions", () => {
  it("shows added, removed and changed bindings (signature and category), doc and header changes", () => {
    const diff = diffToolsetVersions(version(V1), version(V2, "get_weather forecast\nmore"));
    expect(diff).toMatchObject({
      identical: false,
      added: [{ name: "forecast", category: "external" }],
      removed: [{ name: "legacy", category: "read" }],
      changed: [
        {
          name: "get_weather",
          signature: {
            from: "get_weather({ location: string })",
            to: 'get_weather({ location: string, unit?: "c" | "f" = "c" })',
          },
          category: { from: "read", to: "external" },
          descriptionChanged: false,
        },
      ],
      doc: { changed: true, linesAdded: 2, linesRemoved: 1 },
      hosts: { added: ["api2.example.com"], removed: [] },
      timeout: { to: 4000 },
      env: { added: ["API_KEY (secret)"], removed: [] },
    });
    expect(formatToolsetDiff(diff)).toEqual([
      "+ forecast [external]  forecast({ location: string, days?: number = 3 })",
      "- legacy [read]  legacy()",
      '~ get_weather signature:\n    was: get_weather({ location: string })\n    now: get_weather({ location: string, unit?: "c" | "f" = "c" })',
      "~ get_weather category: read -> external",
      "~ doc.md changed (+2 -1 lines)",
      "~ @hosts: +api2.example.com",
      "~ @timeout: unset -> 4000",
      "~ @env: +API_KEY (secret)",
    ]);
  });

  it("reports a code-only change and identical versions", () => {
    const a = version(V1);
    const b = version(V1.replace("return location;", "return location.trim();"));
    expect(formatToolsetDiff(diffToolsetVersions(a, b))).toEqual([
      "~ toolset.ts changed (same bindings and signatures)",
    ]);
    expect(formatToolsetDiff(diffToolsetVersions(a, version(V1)))).toEqual(["no changes"]);
  });
});
