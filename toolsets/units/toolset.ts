/**
 * Unit conversion for length, area, volume, mass, time, speed, data, pressure, energy, power,
 * angle and temperature, with exact factors (SI definitions).
 */

type Kind =
  | "length"
  | "area"
  | "volume"
  | "mass"
  | "time"
  | "speed"
  | "data"
  | "pressure"
  | "energy"
  | "power"
  | "angle"
  | "temperature";

interface UnitDef {
  kind: Kind;
  /** Factor to the base unit of its kind (temperature uses offsets instead). */
  factor: number;
  names: string[];
}

const U = (kind: Kind, factor: number, ...names: string[]): UnitDef => ({ kind, factor, names });

const UNITS: UnitDef[] = [
  // length, base metre
  U("length", 1e-9, "nm", "nanometer", "nanometre"),
  U("length", 1e-6, "um", "µm", "micrometer", "micrometre", "micron"),
  U("length", 1e-3, "mm", "millimeter", "millimetre"),
  U("length", 1e-2, "cm", "centimeter", "centimetre"),
  U("length", 1, "m", "meter", "metre"),
  U("length", 1e3, "km", "kilometer", "kilometre"),
  U("length", 0.0254, "in", "inch", "inches", '"'),
  U("length", 0.3048, "ft", "foot", "feet", "'"),
  U("length", 0.9144, "yd", "yard"),
  U("length", 1609.344, "mi", "mile"),
  U("length", 1852, "nmi", "nautical mile", "nautical_mile"),
  U("length", 149_597_870_700, "au", "astronomical unit"),
  U("length", 9_460_730_472_580_800, "ly", "light year", "lightyear"),
  // area, base square metre
  U("area", 1e-6, "mm2", "mm²", "square millimeter"),
  U("area", 1e-4, "cm2", "cm²", "square centimeter"),
  U("area", 1, "m2", "m²", "square meter", "square metre", "sqm"),
  U("area", 1e4, "ha", "hectare"),
  U("area", 1e6, "km2", "km²", "square kilometer"),
  U("area", 0.09290304, "ft2", "ft²", "sq ft", "square foot", "square feet"),
  U("area", 0.00064516, "in2", "in²", "square inch"),
  U("area", 4046.8564224, "acre"),
  U("area", 2_589_988.110336, "mi2", "mi²", "square mile"),
  // volume, base litre
  U("volume", 1e-3, "ml", "milliliter", "millilitre"),
  U("volume", 1e-2, "cl", "centiliter", "centilitre"),
  U("volume", 0.1, "dl", "deciliter", "decilitre"),
  U("volume", 1, "l", "liter", "litre"),
  U("volume", 1000, "m3", "m³", "cubic meter", "cubic metre"),
  U("volume", 0.001, "cm3", "cm³", "cc"),
  U("volume", 3.785411784, "gal", "gallon", "us gallon"),
  U("volume", 4.54609, "imp gal", "imperial gallon", "uk gallon"),
  U("volume", 0.946352946, "qt", "quart"),
  U("volume", 0.473176473, "pt", "pint", "us pint"),
  U("volume", 0.56826125, "imp pt", "imperial pint", "uk pint"),
  U("volume", 0.2365882365, "cup", "us cup"),
  U("volume", 0.0295735295625, "floz", "fl oz", "fluid ounce"),
  U("volume", 0.01478676478125, "tbsp", "tablespoon"),
  U("volume", 0.00492892159375, "tsp", "teaspoon"),
  // mass, base kilogram
  U("mass", 1e-6, "mg", "milligram"),
  U("mass", 1e-3, "g", "gram"),
  U("mass", 1, "kg", "kilogram"),
  U("mass", 1000, "t", "tonne", "metric ton"),
  U("mass", 0.028349523125, "oz", "ounce"),
  U("mass", 0.45359237, "lb", "lbs", "pound"),
  U("mass", 6.35029318, "st", "stone"),
  U("mass", 907.18474, "short ton", "us ton"),
  // time, base second
  U("time", 1e-9, "ns", "nanosecond"),
  U("time", 1e-6, "us", "µs", "microsecond"),
  U("time", 1e-3, "ms", "millisecond"),
  U("time", 1, "s", "sec", "second"),
  U("time", 60, "min", "minute"),
  U("time", 3600, "h", "hr", "hour"),
  U("time", 86_400, "d", "day"),
  U("time", 604_800, "wk", "week"),
  U("time", 31_557_600, "yr", "year", "julian year"),
  // speed, base metre per second
  U("speed", 1, "m/s", "mps", "meter per second"),
  U("speed", 1000 / 3600, "km/h", "kph", "kmh", "kilometer per hour"),
  U("speed", 1609.344 / 3600, "mph", "mi/h", "mile per hour"),
  U("speed", 1852 / 3600, "kn", "kt", "knot"),
  U("speed", 0.3048, "ft/s", "fps", "foot per second"),
  // data, base byte
  U("data", 0.125, "bit", "b"),
  U("data", 1, "byte", "B"),
  U("data", 1e3, "kB", "KB", "kilobyte"),
  U("data", 1e6, "MB", "megabyte"),
  U("data", 1e9, "GB", "gigabyte"),
  U("data", 1e12, "TB", "terabyte"),
  U("data", 1024, "KiB", "kibibyte"),
  U("data", 1024 ** 2, "MiB", "mebibyte"),
  U("data", 1024 ** 3, "GiB", "gibibyte"),
  U("data", 1024 ** 4, "TiB", "tebibyte"),
  U("data", 125_000, "Mbit", "Mb", "megabit"),
  U("data", 125_000_000, "Gbit", "Gb", "gigabit"),
  // pressure, base pascal
  U("pressure", 1, "Pa", "pascal"),
  U("pressure", 100, "hPa", "hectopascal", "mbar", "millibar"),
  U("pressure", 1000, "kPa", "kilopascal"),
  U("pressure", 1e5, "bar"),
  U("pressure", 101_325, "atm", "atmosphere"),
  U("pressure", 6894.757293168361, "psi"),
  U("pressure", 133.322387415, "mmHg", "torr"),
  // energy, base joule
  U("energy", 1, "J", "joule"),
  U("energy", 1000, "kJ", "kilojoule"),
  U("energy", 4.184, "cal", "calorie"),
  U("energy", 4184, "kcal", "kilocalorie", "Cal"),
  U("energy", 3600, "Wh", "watt hour"),
  U("energy", 3.6e6, "kWh", "kilowatt hour"),
  U("energy", 1055.05585262, "BTU", "btu"),
  U("energy", 1.602176634e-19, "eV", "electronvolt"),
  // power, base watt
  U("power", 1, "W", "watt"),
  U("power", 1000, "kW", "kilowatt"),
  U("power", 1e6, "MW", "megawatt"),
  U("power", 745.6998715822702, "hp", "horsepower"),
  // angle, base degree
  U("angle", 1, "deg", "degree", "°"),
  U("angle", 180 / Math.PI, "rad", "radian"),
  U("angle", 0.9, "grad", "gon"),
  U("angle", 360, "turn", "rev", "revolution"),
  U("angle", 1 / 60, "arcmin", "arcminute"),
  U("angle", 1 / 3600, "arcsec", "arcsecond"),
  // temperature: factor unused, see toKelvin
  U("temperature", 1, "C", "°C", "celsius", "degC"),
  U("temperature", 1, "F", "°F", "fahrenheit", "degF"),
  U("temperature", 1, "K", "kelvin"),
];

function normalize(name: string): string {
  return name.trim().replace(/\s+/g, " ");
}

function findUnit(raw: string): UnitDef {
  const name = normalize(raw);
  // Case matters for a few symbols (MB vs Mb, B vs b); try exact first, then case-insensitive and plural.
  const exact = UNITS.find((u) => u.names.includes(name));
  if (exact) return exact;
  const lower = name.toLowerCase();
  const candidates = [lower, lower.replace(/s$/, ""), lower.replace(/es$/, "")];
  const loose = UNITS.find((u) => u.names.some((n) => candidates.includes(n.toLowerCase())));
  if (loose) return loose;
  const near = UNITS.flatMap((u) => u.names).filter((n) => n.toLowerCase().startsWith(lower.slice(0, 2)));
  throw new Error(
    `unknown unit "${raw}"${near.length ? ` (did you mean ${near.slice(0, 5).join(", ")}?)` : ""}`,
  );
}

function toKelvin(value: number, unit: string): number {
  if (unit === "C") return value + 273.15;
  if (unit === "F") return ((value - 32) * 5) / 9 + 273.15;
  return value;
}

function fromKelvin(value: number, unit: string): number {
  if (unit === "C") return value - 273.15;
  if (unit === "F") return ((value - 273.15) * 9) / 5 + 32;
  return value;
}

/** Rounds away binary noise (0.30000000000000004) without hiding real digits. */
function clean(value: number): number {
  return Number.parseFloat(value.toPrecision(12));
}

export interface Conversion {
  value: number;
  from: string;
  to: string;
  kind: string;
  /** Human-readable line, e.g. "10 mi = 16.09344 km". */
  text: string;
}

/**
 * Convert a value between units of the same kind: length, area, volume, mass, time, speed, data,
 * pressure, energy, power, angle or temperature. Units are symbols or names ("km", "miles",
 * "°F", "GiB", "psi"); symbols are case-sensitive where it matters (MB megabyte, Mb megabit).
 * @tool read
 * @param value The number to convert
 * @param from The unit of the value, e.g. "mi"
 * @param to The unit to convert to, e.g. "km"
 */
export function convert(value: number, from: string, to: string): Conversion {
  if (!Number.isFinite(value)) throw new Error("value must be a finite number");
  const a = findUnit(from);
  const b = findUnit(to);
  if (a.kind !== b.kind) throw new Error(`cannot convert ${a.kind} (${from}) to ${b.kind} (${to})`);
  const fromSymbol = a.names[0] as string;
  const toSymbol = b.names[0] as string;
  let result: number;
  if (a.kind === "temperature") {
    const kelvin = toKelvin(value, fromSymbol);
    if (kelvin < 0) throw new Error("that temperature is below absolute zero");
    result = fromKelvin(kelvin, toSymbol);
  } else {
    result = (value * a.factor) / b.factor;
  }
  const out = clean(result);
  return {
    value: out,
    from: fromSymbol,
    to: toSymbol,
    kind: a.kind,
    text: `${value} ${fromSymbol} = ${out} ${toSymbol}`,
  };
}

/**
 * List the units this toolset knows, grouped by kind, with their accepted names.
 * @tool read
 * @param kind Only this kind, e.g. "length"; all kinds when left out
 */
export function list_units(kind?: Kind): Record<string, string[][]> {
  const out: Record<string, string[][]> = {};
  for (const u of UNITS) {
    if (kind !== undefined && u.kind !== kind) continue;
    const group = out[u.kind] ?? [];
    group.push(u.names);
    out[u.kind] = group;
  }
  return out;
}
