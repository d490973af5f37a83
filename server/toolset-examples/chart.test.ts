import { inflateSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { closeTestPool, compileExample, runBinding } from "./helpers";

const chart = compileExample("chart");
afterAll(closeTestPool);

interface ChartImage {
  data_base64: string;
  mime: string;
  width: number;
  height: number;
  alt: string;
}

/** Minimal PNG reader for the encoder's own output: chunks with CRC check, zlib via node. */
function decodePng(base64: string) {
  const bytes = Buffer.from(base64, "base64");
  expect([...bytes.subarray(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
  const chunks: Record<string, Buffer> = {};
  let offset = 8;
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.subarray(offset + 4, offset + 8).toString("latin1");
    chunks[type] = Buffer.concat([
      chunks[type] ?? Buffer.alloc(0),
      bytes.subarray(offset + 8, offset + 8 + length),
    ]);
    offset += 12 + length;
  }
  const ihdr = chunks.IHDR as Buffer;
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  const raw = inflateSync(chunks.IDAT as Buffer); // throws on a bad stream or Adler-32
  expect(raw.length).toBe((width + 1) * height);
  const pixel = (x: number, y: number) => raw[y * (width + 1) + 1 + x] as number;
  const palette = chunks.PLTE as Buffer;
  const rgb = (index: number) => [...palette.subarray(index * 3, index * 3 + 3)];
  return { width, height, pixel, rgb, ihdr };
}

describe("[TOOLSETS] chart", () => {
  it("draws a bar chart as a valid PNG with the requested size and bar color", async () => {
    const result = await runBinding(chart, "bar_chart", {
      labels: ["Q1", "Q2", "Q3"],
      values: [12, 19, -7],
      title: "Sales 2024",
      color: "#ff0000",
      width: 320,
      height: 200,
    });
    expect(result.ok).toBe(true);
    const image = (result as { value: ChartImage }).value;
    expect(image).toMatchObject({ mime: "image/png", width: 320, height: 200 });
    expect(image.alt).toBe('Bar chart "Sales 2024": Q1 12, Q2 19, Q3 -7');
    const png = decodePng(image.data_base64);
    expect([png.width, png.height]).toEqual([320, 200]);
    expect(png.ihdr[9]).toBe(3); // indexed colour
    const red = [255, 0, 0];
    let redPixels = 0;
    for (let y = 0; y < png.height; y++) {
      for (let x = 0; x < png.width; x++) if (png.rgb(png.pixel(x, y)).join() === red.join()) redPixels++;
    }
    // Three bars of real area, not a stray pixel.
    expect(redPixels).toBeGreaterThan(2000);
    // Compression works: far below the raw size.
    expect(Buffer.from(image.data_base64, "base64").length).toBeLessThan(((320 + 1) * 200) / 4);
  });

  it("draws a multi-series line chart with gaps", async () => {
    const result = await runBinding(chart, "line_chart", {
      series: [
        { name: "2023", values: [3, 5, null, 6] },
        { name: "2024", values: [4, 6, 7, 9] },
      ],
      labels: ["Jan", "Feb", "Mar", "Apr"],
      title: "Signups",
    });
    expect(result.ok).toBe(true);
    const image = (result as { value: ChartImage }).value;
    const png = decodePng(image.data_base64);
    expect([png.width, png.height]).toEqual([640, 400]);
    expect(image.alt).toContain("2023, 2024 over 4 points");
  });

  it("refuses mismatched input with a clear message", async () => {
    expect(await runBinding(chart, "bar_chart", { labels: ["a"], values: [1, 2] })).toMatchObject({
      ok: false,
      error: "labels and values must have the same length (at least 1)",
    });
    expect(await runBinding(chart, "bar_chart", { labels: ["a"], values: [1], width: 5000 })).toMatchObject({
      ok: false,
      error: "width must be a whole number from 160 to 1600",
    });
  });
});
