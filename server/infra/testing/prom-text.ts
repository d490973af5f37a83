/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4) for tests: no parser
 * package is installed, so this one follows the format's rules and throws on anything else —
 * `# HELP`/`# TYPE` lines, one TYPE per family before its samples, metric and label names,
 * quoted label values with their escapes, float values (NaN, +Inf, -Inf), optional timestamps,
 * and for histograms cumulative buckets that end in `+Inf` equal to `_count`.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SUFFIXES = { histogram: ["_bucket", "_sum", "_count"], summary: ["_sum", "_count", ""] } as const;

function parseValue(text: string, line: number): number {
  if (text === "NaN") return Number.NaN;
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text))
    throw new Error(`line ${line}: bad value "${text}"`);
  return Number(text);
}

function parseLabels(text: string, line: number): [Record<string, string>, string] {
  const labels: Record<string, string> = {};
  let at = 1;
  for (;;) {
    while (text[at] === " ") at++;
    if (text[at] === "}") return [labels, text.slice(at + 1)];
    const eq = text.indexOf("=", at);
    const name = text.slice(at, eq).trim();
    if (eq < 0 || !LABEL.test(name)) throw new Error(`line ${line}: bad label name "${name}"`);
    if (name in labels) throw new Error(`line ${line}: label ${name} twice`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label ${name} value is not quoted`);
    let value = "";
    let i = eq + 2;
    for (; i < text.length && text[i] !== '"'; i++) {
      if (text[i] === "\\") {
        const next = text[++i];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else throw new Error(`line ${line}: bad escape \\${next}`);
      } else value += text[i];
    }
    if (text[i] !== '"') throw new Error(`line ${line}: unterminated label value`);
    labels[name] = value;
    at = i + 1;
    if (text[at] === ",") at++;
    else if (text[at] !== "}") throw new Error(`line ${line}: expected , or } after label ${name}`);
  }
}

function familyOf(families: Map<string, Family>, name: string): Family | undefined {
  const direct = families.get(name);
  if (direct) return direct;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!name.endsWith(suffix)) continue;
    const family = families.get(name.slice(0, -suffix.length));
    if (family && (family.type === "histogram" || family.type === "summary")) return family;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const lines = text.split("\n");
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    if (raw.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (!m) return; // a plain comment
      const [, kind, name = "", rest = ""] = m;
      if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name "${name}"`);
      const family = families.get(name) ?? { name, type: "untyped", help: "", samples: [] };
      if (kind === "TYPE") {
        if (family.samples.length) throw new Error(`line ${line}: TYPE of ${name} after its samples`);
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest))
          throw new Error(`line ${line}: bad type "${rest}"`);
        family.type = rest as Family["type"];
      } else family.help = rest.replace(/\\n/g, "\n").replace(/\\\\/g, "\\");
      families.set(name, family);
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(.*)$/.exec(raw);
    if (!m) throw new Error(`line ${line}: not a sample: ${raw}`);
    const [, name = "", after = ""] = m;
    let labels: Record<string, string> = {};
    let rest = after;
    if (rest.startsWith("{")) [labels, rest] = parseLabels(rest, line);
    const parts = rest.trim().split(/\s+/);
    if (parts.length < 1 || parts.length > 2 || !parts[0])
      throw new Error(`line ${line}: bad sample: ${raw}`);
    const value = parseValue(parts[0], line);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`line ${line}: bad timestamp`);
    let family = familyOf(families, name);
    if (!family) {
      family = { name, type: "untyped", help: "", samples: [] };
      families.set(name, family);
    }
    if (family.type === "histogram" || family.type === "summary") {
      const suffix = name.slice(family.name.length);
      if (!(SUFFIXES[family.type] as readonly string[]).includes(suffix))
        throw new Error(`line ${line}: ${name} is not a sample of the ${family.type} ${family.name}`);
    } else if (name !== family.name) throw new Error(`line ${line}: ${name} outside its family`);
    family.samples.push({ name, labels, value });
  });
  for (const family of families.values()) if (family.type === "histogram") checkHistogram(family);
  return families;
}

function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    if (s.name.endsWith("_bucket")) {
      if (le === undefined) throw new Error(`${family.name}: bucket without le`);
      entry.buckets.push([parseValue(le, 0), s.value]);
    } else if (s.name.endsWith("_count")) entry.count = s.value;
    series.set(key, entry);
  }
  for (const [key, { buckets, count }] of series) {
    for (let i = 1; i < buckets.length; i++) {
      const [le, n] = buckets[i] as [number, number];
      const [prevLe, prevN] = buckets[i - 1] as [number, number];
      if (le <= prevLe || n < prevN) throw new Error(`${family.name}${key}: buckets not cumulative`);
    }
    const last = buckets.at(-1);
    if (!last || last[0] !== Number.POSITIVE_INFINITY || last[1] !== count)
      throw new Error(`${family.name}${key}: +Inf bucket missing or not equal to _count`);
  }
}

/** The value of the sample `name` whose labels include `labels` (0 when there is none). */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const family = familyOf(families, name);
  const sample = family?.samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return sample?.value ?? 0;
}
