/**
 * Weather from an Open-Meteo compatible API: place search, current conditions and a daily
 * forecast. The base URLs are configurable, so a self-hosted Open-Meteo (or any server speaking
 * the same API) works without the internet.
 * @hosts api.open-meteo.com, geocoding-api.open-meteo.com
 * @timeout 8000
 * @env BASE_URL Forecast API base URL; default https://api.open-meteo.com
 * @env GEOCODING_URL Place search API base URL; default https://geocoding-api.open-meteo.com
 */

const DEFAULT_BASE_URL = "https://api.open-meteo.com";
const DEFAULT_GEOCODING_URL = "https://geocoding-api.open-meteo.com";

type TemperatureUnit = "celsius" | "fahrenheit";

const CONDITIONS: Record<number, string> = {
  0: "clear sky",
  1: "mainly clear",
  2: "partly cloudy",
  3: "overcast",
  45: "fog",
  48: "depositing rime fog",
  51: "light drizzle",
  53: "drizzle",
  55: "dense drizzle",
  56: "light freezing drizzle",
  57: "freezing drizzle",
  61: "light rain",
  63: "rain",
  65: "heavy rain",
  66: "light freezing rain",
  67: "freezing rain",
  71: "light snow",
  73: "snow",
  75: "heavy snow",
  77: "snow grains",
  80: "light rain showers",
  81: "rain showers",
  82: "violent rain showers",
  85: "snow showers",
  86: "heavy snow showers",
  95: "thunderstorm",
  96: "thunderstorm with hail",
  99: "thunderstorm with heavy hail",
};

function conditions(code: unknown): string {
  return typeof code === "number" ? (CONDITIONS[code] ?? `weather code ${code}`) : "unknown";
}

function base(value: string | undefined, fallback: string): string {
  return (value?.trim() || fallback).replace(/\/+$/, "");
}

function query(params: Record<string, string | number>): string {
  return Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join("&");
}

async function getJson(url: string): Promise<Record<string, unknown>> {
  const response = await fetch(url, { headers: { accept: "application/json" } });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(
      `weather API answered HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
    );
  }
  if (!response.ok) {
    const reason =
      typeof body === "object" && body !== null && "reason" in body
        ? String(body.reason)
        : text.slice(0, 200);
    throw new Error(`weather API answered HTTP ${response.status}: ${reason}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new Error("weather API answered with unexpected JSON");
  return body as Record<string, unknown>;
}

function checkCoordinates(latitude: number, longitude: number): void {
  if (!(latitude >= -90 && latitude <= 90)) throw new Error("latitude must be between -90 and 90");
  if (!(longitude >= -180 && longitude <= 180)) throw new Error("longitude must be between -180 and 180");
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

export interface Place {
  name: string;
  country: string;
  /** State, province or region, when known. */
  region: string;
  latitude: number;
  longitude: number;
  timezone: string;
  population: number | null;
}

/**
 * Find places by name and get their coordinates, to pass to current_weather and forecast.
 * Returns up to `count` matches, best first; an empty list when nothing matches.
 * @tool external
 * @param name Place name, e.g. "Oslo" or "Springfield"
 * @param count How many matches to return (1..20)
 */
export async function find_place(name: string, count = 5): Promise<Place[]> {
  if (!name.trim()) throw new Error("name must not be empty");
  if (!Number.isInteger(count) || count < 1 || count > 20) throw new Error("count must be 1..20");
  const url = `${base(env.GEOCODING_URL, DEFAULT_GEOCODING_URL)}/v1/search?${query({ name: name.trim(), count, language: "en", format: "json" })}`;
  const body = await getJson(url);
  const results = Array.isArray(body.results) ? body.results : [];
  return results.map((raw) => {
    const r = record(raw);
    return {
      name: String(r.name ?? ""),
      country: String(r.country ?? ""),
      region: String(r.admin1 ?? ""),
      latitude: Number(r.latitude),
      longitude: Number(r.longitude),
      timezone: String(r.timezone ?? ""),
      population: typeof r.population === "number" ? r.population : null,
    };
  });
}

export interface CurrentWeather {
  /** Local time of the observation, ISO 8601 without offset (see timezone). */
  time: string;
  timezone: string;
  temperature: number;
  feels_like: number;
  /** "°C" or "°F". */
  unit: string;
  humidity_percent: number;
  precipitation_mm: number;
  wind_speed_kmh: number;
  conditions: string;
}

/**
 * Current weather at a place: temperature, feels-like temperature, humidity, precipitation, wind
 * and conditions in words. Use find_place first to turn a name into coordinates.
 * @tool external
 * @param latitude Latitude in degrees (-90..90)
 * @param longitude Longitude in degrees (-180..180)
 * @param unit Temperature unit
 */
export async function current_weather(
  latitude: number,
  longitude: number,
  unit: TemperatureUnit = "celsius",
): Promise<CurrentWeather> {
  checkCoordinates(latitude, longitude);
  const url = `${base(env.BASE_URL, DEFAULT_BASE_URL)}/v1/forecast?${query({
    latitude,
    longitude,
    current:
      "temperature_2m,apparent_temperature,relative_humidity_2m,precipitation,weather_code,wind_speed_10m",
    temperature_unit: unit,
    wind_speed_unit: "kmh",
    timezone: "auto",
  })}`;
  const body = await getJson(url);
  const current = record(body.current);
  return {
    time: String(current.time ?? ""),
    timezone: String(body.timezone ?? ""),
    temperature: Number(current.temperature_2m),
    feels_like: Number(current.apparent_temperature),
    unit: unit === "celsius" ? "°C" : "°F",
    humidity_percent: Number(current.relative_humidity_2m),
    precipitation_mm: Number(current.precipitation),
    wind_speed_kmh: Number(current.wind_speed_10m),
    conditions: conditions(current.weather_code),
  };
}

export interface ForecastDay {
  /** YYYY-MM-DD in the place's time zone. */
  date: string;
  conditions: string;
  min: number;
  max: number;
  precipitation_mm: number;
}

/**
 * Daily forecast for a place: conditions, minimum and maximum temperature and precipitation per
 * day, starting today. Use find_place first to turn a name into coordinates.
 * @tool external
 * @param latitude Latitude in degrees (-90..90)
 * @param longitude Longitude in degrees (-180..180)
 * @param days Number of days (1..16)
 * @param unit Temperature unit
 */
export async function forecast(
  latitude: number,
  longitude: number,
  days = 3,
  unit: TemperatureUnit = "celsius",
): Promise<{ timezone: string; unit: string; days: ForecastDay[] }> {
  checkCoordinates(latitude, longitude);
  if (!Number.isInteger(days) || days < 1 || days > 16) throw new Error("days must be 1..16");
  const url = `${base(env.BASE_URL, DEFAULT_BASE_URL)}/v1/forecast?${query({
    latitude,
    longitude,
    daily: "weather_code,temperature_2m_min,temperature_2m_max,precipitation_sum",
    forecast_days: days,
    temperature_unit: unit,
    timezone: "auto",
  })}`;
  const body = await getJson(url);
  const daily = record(body.daily);
  const column = (name: string): unknown[] => (Array.isArray(daily[name]) ? (daily[name] as unknown[]) : []);
  const dates = column("time");
  return {
    timezone: String(body.timezone ?? ""),
    unit: unit === "celsius" ? "°C" : "°F",
    days: dates.map((date, i) => ({
      date: String(date),
      conditions: conditions(column("weather_code")[i]),
      min: Number(column("temperature_2m_min")[i]),
      max: Number(column("temperature_2m_max")[i]),
      precipitation_mm: Number(column("precipitation_sum")[i]),
    })),
  };
}
