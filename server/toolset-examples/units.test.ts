import { afterAll, describe, expect, it } from "vitest";
import { closeTestPool, compileExample, runBinding } from "./helpers";

const units = compileExample("units");
const convert = (value: number, from: string, to: string) =>
  runBinding(units, "convert", { value, from, to });
afterAll(closeTestPool);

describe("[TOOLSETS] units", () => {
  it("maps the optional kind parameter to an enum", () => {
    const listUnits = units.bindings.find((b) => b.name === "list_units");
    expect(listUnits?.inputSchema).toMatchObject({
      properties: { kind: { type: "string", enum: expect.arrayContaining(["length", "temperature"]) } },
    });
    expect(listUnits?.inputSchema.required).toBeUndefined();
  });

  it("converts lengths, names and plurals exactly", async () => {
    expect(await convert(10, "miles", "km")).toMatchObject({
      ok: true,
      value: { value: 16.09344, kind: "length", text: "10 mi = 16.09344 km" },
    });
    expect(await convert(12, "inches", "ft")).toMatchObject({ value: { value: 1 } });
    expect(await convert(0.1 + 0.2, "m", "m")).toMatchObject({ value: { value: 0.3 } });
  });

  it("converts temperatures with offsets and refuses below absolute zero", async () => {
    expect(await convert(100, "°C", "F")).toMatchObject({ value: { value: 212 } });
    expect(await convert(0, "K", "celsius")).toMatchObject({ value: { value: -273.15 } });
    expect(await convert(-500, "C", "K")).toMatchObject({
      ok: false,
      error: "that temperature is below absolute zero",
    });
  });

  it("keeps case where it matters: MB is a megabyte, Mb a megabit", async () => {
    expect(await convert(1, "MB", "Mb")).toMatchObject({ value: { value: 8 } });
    expect(await convert(1, "GiB", "MiB")).toMatchObject({ value: { value: 1024 } });
  });

  it("explains impossible conversions and unknown units", async () => {
    expect(await convert(1, "kg", "m")).toMatchObject({
      ok: false,
      error: "cannot convert mass (kg) to length (m)",
    });
    expect(await convert(1, "parsecs", "m")).toMatchObject({
      ok: false,
      error: expect.stringContaining('unknown unit "parsecs"'),
    });
  });

  it("lists units of one kind", async () => {
    const result = await runBinding(units, "list_units", { kind: "temperature" });
    expect(result).toMatchObject({
      ok: true,
      value: {
        temperature: [
          ["C", "°C", "celsius", "degC"],
          ["F", "°F", "fahrenheit", "degF"],
          ["K", "kelvin"],
        ],
      },
    });
  });
});
