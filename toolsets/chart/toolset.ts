/**
 * Draws bar and line charts as PNG images entirely in code: a small raster, a 3x5 pixel font and a
 * PNG encoder (zlib, fixed-Huffman deflate, CRC-32, Adler-32). No network, no state.
 */

/** A PNG image as data: pass it to the assets module to get an asset id that view_image shows. */
export interface ChartImage {
  data_base64: string;
  mime: "image/png";
  width: number;
  height: number;
  /** A one-line text description of the chart, for alt text and for agents that cannot see. */
  alt: string;
}

export interface Series {
  /** Legend label. */
  name: string;
  /** One value per x position; null leaves a gap. */
  values: (number | null)[];
}

// ---- palette (indexed PNG) ----

const BACKGROUND = 0;
const INK = 1;
const GRID = 2;
const FIRST_SERIES = 3;
const SERIES_COLORS = [
  "#4e79a7",
  "#f28e2b",
  "#e15759",
  "#76b7b2",
  "#59a14f",
  "#edc948",
  "#b07aa1",
  "#ff9da7",
  "#9c755f",
  "#bab0ac",
];

function hexToRgb(hex: string): [number, number, number] {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex.trim());
  if (!m) throw new Error(`color must look like "#4e79a7", got "${hex}"`);
  const n = Number.parseInt(m[1] as string, 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function palette(seriesColors: string[]): number[][] {
  return [[255, 255, 255], [51, 51, 51], [225, 225, 225], ...seriesColors.map(hexToRgb)];
}

// ---- raster ----

interface Canvas {
  width: number;
  height: number;
  pixels: Uint8Array;
}

function createCanvas(width: number, height: number): Canvas {
  return { width, height, pixels: new Uint8Array(width * height).fill(BACKGROUND) };
}

function fillRect(c: Canvas, x: number, y: number, w: number, h: number, color: number): void {
  const x0 = Math.max(0, Math.round(x));
  const y0 = Math.max(0, Math.round(y));
  const x1 = Math.min(c.width, Math.round(x + w));
  const y1 = Math.min(c.height, Math.round(y + h));
  for (let yy = y0; yy < y1; yy++) c.pixels.fill(color, yy * c.width + x0, yy * c.width + Math.max(x0, x1));
}

function drawLine(
  c: Canvas,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  color: number,
  thickness: number,
): void {
  const steps = Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0), 1);
  const half = Math.floor(thickness / 2);
  for (let i = 0; i <= steps; i++) {
    const x = Math.round(x0 + ((x1 - x0) * i) / steps);
    const y = Math.round(y0 + ((y1 - y0) * i) / steps);
    fillRect(c, x - half, y - half, thickness, thickness, color);
  }
}

// ---- 3x5 font: five rows per glyph, one octal digit (3 bits, left pixel = 4) per row ----

const FONT: Record<string, string> = {
  A: "25755",
  B: "65656",
  C: "34443",
  D: "65556",
  E: "74647",
  F: "74644",
  G: "34553",
  H: "55755",
  I: "72227",
  J: "11152",
  K: "55655",
  L: "44447",
  M: "57755",
  N: "65555",
  O: "25552",
  P: "65644",
  Q: "25563",
  R: "65655",
  S: "34216",
  T: "72222",
  U: "55557",
  V: "55552",
  W: "55775",
  X: "55255",
  Y: "55222",
  Z: "71247",
  "0": "75557",
  "1": "26227",
  "2": "61247",
  "3": "61216",
  "4": "55711",
  "5": "74616",
  "6": "34757",
  "7": "71222",
  "8": "75757",
  "9": "75716",
  ".": "00002",
  ",": "00024",
  "-": "00700",
  "+": "02720",
  "%": "51245",
  ":": "02020",
  "/": "11244",
  "(": "12221",
  ")": "42224",
  "'": "22000",
  "!": "22202",
  "?": "61202",
  _: "00007",
  "#": "57575",
  "=": "07070",
  " ": "00000",
  "<": "12421",
  ">": "42124",
  "*": "05250",
  "&": "25253",
  $: "36336",
  "[": "64446",
  "]": "32223",
};

const GLYPH_ADVANCE = 4;

function textWidth(text: string, scale: number): number {
  return text.length === 0 ? 0 : (text.length * GLYPH_ADVANCE - 1) * scale;
}

function drawText(c: Canvas, x: number, y: number, text: string, color: number, scale: number): void {
  let cx = Math.round(x);
  for (const ch of text.toUpperCase()) {
    const glyph = FONT[ch] ?? FONT["?"] ?? "";
    for (let row = 0; row < 5; row++) {
      const bits = Number(glyph[row] ?? "0");
      for (let col = 0; col < 3; col++) {
        if (bits & (4 >> col))
          fillRect(c, cx + col * scale, Math.round(y) + row * scale, scale, scale, color);
      }
    }
    cx += GLYPH_ADVANCE * scale;
  }
}

/** Cuts text to fit `maxWidth`, marking the cut with a trailing "." */
function fitText(text: string, maxWidth: number, scale: number): string {
  if (textWidth(text, scale) <= maxWidth) return text;
  const chars = Math.max(0, Math.floor((maxWidth / scale + 1) / GLYPH_ADVANCE) - 1);
  return chars <= 0 ? "" : `${text.slice(0, chars)}.`;
}

// ---- axes ----

function niceTicks(min: number, max: number, count: number): number[] {
  let lo = min;
  let hi = max;
  if (lo === hi) {
    lo -= 1;
    hi += 1;
  }
  const rough = (hi - lo) / count;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const norm = rough / magnitude;
  const step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
  const ticks: number[] = [];
  for (let v = Math.floor(lo / step) * step; v <= Math.ceil(hi / step) * step + step / 2; v += step) {
    ticks.push(Number.parseFloat(v.toPrecision(10)));
  }
  return ticks;
}

function formatNumber(v: number): string {
  const abs = Math.abs(v);
  const short = (x: number) => Number.parseFloat(x.toPrecision(3)).toString();
  if (abs >= 1e9) return `${short(v / 1e9)}B`;
  if (abs >= 1e6) return `${short(v / 1e6)}M`;
  if (abs >= 1e4) return `${short(v / 1e3)}K`;
  return Number.parseFloat(v.toPrecision(4)).toString();
}

interface Plot {
  left: number;
  top: number;
  right: number;
  bottom: number;
  lo: number;
  hi: number;
}

/** Title, y axis with grid lines and labels; returns the plot area and the value range. */
function frame(
  c: Canvas,
  title: string | undefined,
  values: number[],
  reserveTop: number,
  reserveBottom: number,
): Plot {
  const pad = 12;
  let top = pad;
  if (title) {
    const text = fitText(title, c.width - 2 * pad, 2);
    drawText(c, (c.width - textWidth(text, 2)) / 2, top, text, INK, 2);
    top += 18;
  }
  top += reserveTop;
  const ticks = niceTicks(Math.min(0, ...values), Math.max(0, ...values), 5);
  const labels = ticks.map(formatNumber);
  const left = pad + Math.max(...labels.map((l) => textWidth(l, 2))) + 8;
  const right = c.width - pad;
  const bottom = c.height - pad - reserveBottom;
  if (right - left < 40 || bottom - top < 40)
    throw new Error("the image is too small for this chart; make it larger");
  const lo = ticks[0] as number;
  const hi = ticks[ticks.length - 1] as number;
  const plot = { left, top, right, bottom, lo, hi };
  ticks.forEach((t, i) => {
    const y = yOf(plot, t);
    fillRect(c, left, y, right - left, 1, t === 0 ? INK : GRID);
    const label = labels[i] as string;
    drawText(c, left - 6 - textWidth(label, 2), y - 5, label, INK, 2);
  });
  fillRect(c, left, top, 1, bottom - top + 1, INK);
  return plot;
}

function yOf(p: Plot, v: number): number {
  return Math.round(p.bottom - ((v - p.lo) / (p.hi - p.lo)) * (p.bottom - p.top));
}

function checkSize(width: number, height: number): void {
  if (!Number.isInteger(width) || width < 160 || width > 1600)
    throw new Error("width must be a whole number from 160 to 1600");
  if (!Number.isInteger(height) || height < 120 || height > 1200)
    throw new Error("height must be a whole number from 120 to 1200");
}

function checkValues(values: (number | null)[], what: string): void {
  if (values.some((v) => v !== null && (typeof v !== "number" || !Number.isFinite(v)))) {
    throw new Error(`${what} must be finite numbers (or null for a gap)`);
  }
}

/** x labels: at most `room`-many, evenly picked, centred under their x position. */
function drawXLabels(c: Canvas, labels: string[], xs: number[], y: number, slot: number): void {
  const scale = labels.every((l) => textWidth(l, 2) <= slot - 4) ? 2 : 1;
  const widest = Math.max(...labels.map((l) => textWidth(l, scale)), 1);
  const every = Math.max(1, Math.ceil((widest + 6) / Math.max(slot, 1)));
  labels.forEach((label, i) => {
    if (i % every !== 0) return;
    const text = fitText(label, Math.max(slot * every - 4, GLYPH_ADVANCE * scale * 2), scale);
    const w = textWidth(text, scale);
    const x = Math.min(Math.max((xs[i] as number) - w / 2, 2), c.width - w - 2);
    drawText(c, x, y, text, INK, scale);
  });
}

/**
 * Draw a bar chart as a PNG image, one bar per label. Returns { data_base64, mime, width, height,
 * alt }; save it with the assets module to show it with view_image.
 * @tool read
 * @param labels One label per bar, e.g. ["Q1", "Q2", "Q3"]
 * @param values One number per bar (negative bars go down from zero)
 * @param title Text above the chart
 * @param color Bar color as "#rrggbb"
 * @param width Image width in pixels (160..1600)
 * @param height Image height in pixels (120..1200)
 */
export function bar_chart(
  labels: string[],
  values: number[],
  title?: string,
  color = "#4e79a7",
  width = 640,
  height = 400,
): ChartImage {
  checkSize(width, height);
  if (labels.length === 0 || labels.length !== values.length)
    throw new Error("labels and values must have the same length (at least 1)");
  if (labels.length > 200) throw new Error("at most 200 bars");
  checkValues(values, "values");
  const c = createCanvas(width, height);
  const p = frame(c, title, values, 14, 16);
  const slot = (p.right - p.left) / values.length;
  const barWidth = Math.max(1, Math.floor(slot * 0.7));
  const zero = yOf(p, 0);
  const xs: number[] = [];
  values.forEach((v, i) => {
    const cx = p.left + slot * (i + 0.5);
    xs.push(cx);
    const y = yOf(p, v);
    fillRect(
      c,
      cx - barWidth / 2,
      Math.min(y, zero),
      barWidth,
      Math.max(1, Math.abs(zero - y)),
      FIRST_SERIES,
    );
    const label = formatNumber(v);
    const scale = textWidth(label, 2) <= slot - 4 ? 2 : 1;
    if (textWidth(label, scale) <= slot - 2) {
      const above = y - 6 * scale - 2;
      drawText(c, cx - textWidth(label, scale) / 2, v >= 0 ? above : y + 3, label, INK, scale);
    }
  });
  fillRect(c, p.left, zero, p.right - p.left, 1, INK);
  drawXLabels(c, labels, xs, p.bottom + 6, slot);
  const alt = `Bar chart${title ? ` "${title}"` : ""}: ${labels.map((l, i) => `${l} ${formatNumber(values[i] as number)}`).join(", ")}`;
  return image(c, palette([color]), alt);
}

/**
 * Draw a line chart of one or more series as a PNG image, with a legend. Returns { data_base64,
 * mime, width, height, alt }; save it with the assets module to show it with view_image.
 * @tool read
 * @param series The lines: [{ name: "2024", values: [1, 3, 2] }, ...] (up to 10, equal lengths)
 * @param labels x-axis labels, one per value position
 * @param title Text above the chart
 * @param width Image width in pixels (160..1600)
 * @param height Image height in pixels (120..1200)
 */
export function line_chart(
  series: Series[],
  labels: string[] = [],
  title?: string,
  width = 640,
  height = 400,
): ChartImage {
  checkSize(width, height);
  if (series.length === 0 || series.length > SERIES_COLORS.length)
    throw new Error(`give 1 to ${SERIES_COLORS.length} series`);
  const n = (series[0] as Series).values.length;
  if (n < 2 || n > 2000) throw new Error("each series needs 2 to 2000 values");
  if (series.some((s) => s.values.length !== n))
    throw new Error("all series must have the same number of values");
  if (labels.length !== 0 && labels.length !== n)
    throw new Error(`labels must be empty or have ${n} entries`);
  for (const s of series) checkValues(s.values, `values of "${s.name}"`);
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  if (all.length === 0) throw new Error("every value is null");
  const c = createCanvas(width, height);
  const p = frame(c, title, all, 20, labels.length ? 16 : 0);
  // Legend in one row above the plot.
  let lx = p.left;
  series.forEach((s, i) => {
    const name = fitText(s.name, 160, 2);
    fillRect(c, lx, p.top - 18, 10, 10, FIRST_SERIES + i);
    drawText(c, lx + 14, p.top - 18, name, INK, 2);
    lx += 14 + textWidth(name, 2) + 16;
  });
  const xs = Array.from({ length: n }, (_, i) => p.left + 4 + ((p.right - p.left - 8) * i) / (n - 1));
  series.forEach((s, si) => {
    let prev: [number, number] | undefined;
    s.values.forEach((v, i) => {
      if (v === null) {
        prev = undefined;
        return;
      }
      const point: [number, number] = [xs[i] as number, yOf(p, v)];
      if (prev) drawLine(c, prev[0], prev[1], point[0], point[1], FIRST_SERIES + si, 2);
      if (n <= 40) fillRect(c, point[0] - 2, point[1] - 2, 5, 5, FIRST_SERIES + si);
      prev = point;
    });
  });
  if (labels.length) drawXLabels(c, labels, xs, p.bottom + 6, (p.right - p.left) / n);
  const alt = `Line chart${title ? ` "${title}"` : ""} of ${series.map((s) => s.name).join(", ")} over ${n} points, from ${formatNumber(Math.min(...all))} to ${formatNumber(Math.max(...all))}`;
  return image(c, palette(SERIES_COLORS.slice(0, series.length)), alt);
}

function image(c: Canvas, colors: number[][], alt: string): ChartImage {
  return {
    data_base64: base64(encodePng(c, colors)),
    mime: "image/png",
    width: c.width,
    height: c.height,
    alt,
  };
}

// ---- PNG encoding ----

const CRC_TABLE: number[] = (() => {
  const table: number[] = [];
  for (let n = 0; n < 256; n++) {
    let v = n;
    for (let k = 0; k < 8; k++) v = v & 1 ? 0xedb88320 ^ (v >>> 1) : v >>> 1;
    table.push(v >>> 0);
  }
  return table;
})();

function crc32(bytes: Uint8Array, start: number, end: number): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++)
    crc = (CRC_TABLE[(crc ^ (bytes[i] as number)) & 255] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function adler32(bytes: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < bytes.length; ) {
    // 5552 is the largest block that cannot overflow before the modulo.
    const end = Math.min(i + 5552, bytes.length);
    for (; i < end; i++) {
      a += bytes[i] as number;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

const LEN_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
  227, 258,
];
const LEN_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
  6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA = [
  0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
];

/** Deflate with the fixed Huffman code; matches only at distance 1 (runs) and one row up. */
function deflate(data: Uint8Array, rowBytes: number): Uint8Array {
  const out: number[] = [];
  let bitBuffer = 0;
  let bitCount = 0;
  const bits = (value: number, count: number) => {
    bitBuffer |= value << bitCount;
    bitCount += count;
    while (bitCount >= 8) {
      out.push(bitBuffer & 255);
      bitBuffer >>>= 8;
      bitCount -= 8;
    }
  };
  // Huffman codes go most-significant bit first.
  const code = (value: number, length: number) => {
    let reversed = 0;
    for (let i = 0; i < length; i++) reversed = (reversed << 1) | ((value >> i) & 1);
    bits(reversed, length);
  };
  const symbol = (s: number) => {
    if (s < 144) code(0x30 + s, 8);
    else if (s < 256) code(0x190 + s - 144, 9);
    else if (s < 280) code(s - 256, 7);
    else code(0xc0 + s - 280, 8);
  };
  const lastIndexAtMost = (table: number[], v: number) => {
    let i = table.length - 1;
    while ((table[i] as number) > v) i--;
    return i;
  };
  bits(1, 1); // final block
  bits(1, 2); // fixed Huffman
  const n = data.length;
  for (let i = 0; i < n; ) {
    let bestLength = 0;
    let bestDistance = 0;
    for (const distance of [1, rowBytes]) {
      if (i < distance) continue;
      let length = 0;
      while (length < 258 && i + length < n && data[i + length] === data[i + length - distance]) length++;
      if (length > bestLength) {
        bestLength = length;
        bestDistance = distance;
      }
    }
    if (bestLength >= 3) {
      const li = lastIndexAtMost(LEN_BASE, bestLength);
      symbol(257 + li);
      bits(bestLength - (LEN_BASE[li] as number), LEN_EXTRA[li] as number);
      const di = lastIndexAtMost(DIST_BASE, bestDistance);
      code(di, 5);
      bits(bestDistance - (DIST_BASE[di] as number), DIST_EXTRA[di] as number);
      i += bestLength;
    } else {
      symbol(data[i] as number);
      i++;
    }
  }
  symbol(256);
  if (bitCount > 0) out.push(bitBuffer & 255);
  return Uint8Array.from(out);
}

function encodePng(c: Canvas, colors: number[][]): Uint8Array {
  const rowBytes = c.width + 1;
  const raw = new Uint8Array(rowBytes * c.height);
  for (let y = 0; y < c.height; y++) {
    raw[y * rowBytes] = 0; // filter: none
    raw.set(c.pixels.subarray(y * c.width, (y + 1) * c.width), y * rowBytes + 1);
  }
  const compressed = deflate(raw, rowBytes);
  const adler = adler32(raw);
  const zlib = new Uint8Array(compressed.length + 6);
  zlib[0] = 0x78;
  zlib[1] = 0x01;
  zlib.set(compressed, 2);
  writeU32(zlib, zlib.length - 4, adler);

  const header = new Uint8Array(13);
  writeU32(header, 0, c.width);
  writeU32(header, 4, c.height);
  header.set([8, 3, 0, 0, 0], 8); // 8-bit, indexed colour
  const plte = Uint8Array.from(colors.flat());
  const chunks = [
    chunk("IHDR", header),
    chunk("PLTE", plte),
    chunk("IDAT", zlib),
    chunk("IEND", new Uint8Array(0)),
  ];
  const signature = [137, 80, 78, 71, 13, 10, 26, 10];
  const png = new Uint8Array(signature.length + chunks.reduce((s, ch) => s + ch.length, 0));
  png.set(signature, 0);
  let offset = signature.length;
  for (const ch of chunks) {
    png.set(ch, offset);
    offset += ch.length;
  }
  return png;
}

function writeU32(bytes: Uint8Array, offset: number, value: number): void {
  bytes[offset] = (value >>> 24) & 255;
  bytes[offset + 1] = (value >>> 16) & 255;
  bytes[offset + 2] = (value >>> 8) & 255;
  bytes[offset + 3] = value & 255;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  writeU32(out, 0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  writeU32(out, 8 + data.length, crc32(out, 4, 8 + data.length));
  return out;
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function base64(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i] as number;
    const b = bytes[i + 1];
    const c = bytes[i + 2];
    const n = (a << 16) | ((b ?? 0) << 8) | (c ?? 0);
    parts.push(
      (BASE64[(n >> 18) & 63] as string) +
        (BASE64[(n >> 12) & 63] as string) +
        (b === undefined ? "=" : (BASE64[(n >> 6) & 63] as string)) +
        (c === undefined ? "=" : (BASE64[n & 63] as string)),
    );
  }
  return parts.join("");
}
