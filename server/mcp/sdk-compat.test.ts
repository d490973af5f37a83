import { describe, expect, it } from "vitest";
import { checkSdkCompat, installedSdkVersion } from "./sdk-compat";

describe("MCP SDK compatibility", () => {
  it("[MCP]: the installed SDK passes, an untested version stops the start with a clear message", () => {
    expect(installedSdkVersion()).toMatch(/^1\.32\./);
    expect(() => checkSdkCompat()).not.toThrow();
    expect(() => checkSdkCompat("1.40.0")).toThrow(/1\.40\.0 is not a version .* npm ci/);
  });
});
