import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeTestPool, compileExample, runBinding } from "./helpers";
import { type LocalServer, sendJson, startLocalServer } from "./local-server";

const weather = compileExample("weather");
let api: LocalServer;

beforeAll(async () => {
  // A stand-in Open-Meteo: the same paths, parameters and response shapes.
  api = await startLocalServer((req, res) => {
    const q = req.url.searchParams;
    if (req.url.pathname === "/v1/search") {
      if (q.get("name") === "Nowhere") return sendJson(res, 200, { generationtime_ms: 0.1 });
      return sendJson(res, 200, {
        results: [
          {
            name: "Oslo",
            country: "Norway",
            admin1: "Oslo",
            latitude: 59.91,
            longitude: 10.75,
            timezone: "Europe/Oslo",
            population: 580000,
          },
        ],
      });
    }
    if (req.url.pathname === "/v1/forecast") {
      if (Number(q.get("latitude")) === 0)
        return sendJson(res, 400, { error: true, reason: "Cannot initialize WeatherVariable" });
      const fahrenheit = q.get("temperature_unit") === "fahrenheit";
      if (q.get("current")) {
        return sendJson(res, 200, {
          timezone: "Europe/Oslo",
          current: {
            time: "2024-05-01T12:00",
            temperature_2m: fahrenheit ? 53.6 : 12,
            apparent_temperature: 10.5,
            relative_humidity_2m: 60,
            precipitation: 0.2,
            weather_code: 61,
            wind_speed_10m: 14.4,
          },
        });
      }
      const days = Number(q.get("forecast_days"));
      return sendJson(res, 200, {
        timezone: "Europe/Oslo",
        daily: {
          time: ["2024-05-01", "2024-05-02", "2024-05-03"].slice(0, days),
          weather_code: [0, 3, 95].slice(0, days),
          temperature_2m_min: [4, 5, 6].slice(0, days),
          temperature_2m_max: [14, 15, 16].slice(0, days),
          precipitation_sum: [0, 1.5, 12].slice(0, days),
        },
      });
    }
    sendJson(res, 404, { error: true, reason: "not found" });
  });
});

afterAll(async () => {
  await api.close();
  await closeTestPool();
});

const local = () => ({
  env: { BASE_URL: api.baseUrl, GEOCODING_URL: `${api.baseUrl}/` },
  allowedHosts: ["127.0.0.1"],
});

describe("[TOOLSETS] weather (against a local Open-Meteo stand-in)", () => {
  it("declares its public hosts, timeout and base URL variables in the header", () => {
    expect(weather.declarations).toMatchObject({
      hosts: ["api.open-meteo.com", "geocoding-api.open-meteo.com"],
      timeoutMs: 8000,
      env: [
        { name: "BASE_URL", secret: false },
        { name: "GEOCODING_URL", secret: false },
      ],
    });
    expect(weather.bindings.every((b) => b.category === "external")).toBe(true);
  });

  it("finds a place through the configured geocoding URL", async () => {
    const result = await runBinding(weather, "find_place", { name: "Oslo" }, local());
    expect(result).toEqual({
      ok: true,
      value: [
        {
          name: "Oslo",
          country: "Norway",
          region: "Oslo",
          latitude: 59.91,
          longitude: 10.75,
          timezone: "Europe/Oslo",
          population: 580000,
        },
      ],
      logs: [],
    });
    const request = api.requests.at(-1);
    expect(request?.url.searchParams.get("count")).toBe("5");
    expect(await runBinding(weather, "find_place", { name: "Nowhere" }, local())).toMatchObject({
      ok: true,
      value: [],
    });
  });

  it("reads current weather with the requested unit and names the conditions", async () => {
    const result = await runBinding(
      weather,
      "current_weather",
      { latitude: 59.91, longitude: 10.75, unit: "fahrenheit" },
      local(),
    );
    expect(result).toMatchObject({
      ok: true,
      value: { temperature: 53.6, unit: "°F", conditions: "light rain", humidity_percent: 60 },
    });
    expect(api.requests.at(-1)?.url.searchParams.get("temperature_unit")).toBe("fahrenheit");
  });

  it("returns a daily forecast with the default of 3 days", async () => {
    const result = await runBinding(weather, "forecast", { latitude: 59.91, longitude: 10.75 }, local());
    expect(result).toMatchObject({
      ok: true,
      value: {
        unit: "°C",
        days: [
          { date: "2024-05-01", conditions: "clear sky", min: 4, max: 14, precipitation_mm: 0 },
          { date: "2024-05-02", conditions: "overcast" },
          { date: "2024-05-03", conditions: "thunderstorm", precipitation_mm: 12 },
        ],
      },
    });
  });

  it("reports API errors and bad coordinates clearly", async () => {
    expect(
      await runBinding(weather, "current_weather", { latitude: 0, longitude: 0 }, local()),
    ).toMatchObject({
      ok: false,
      error: "weather API answered HTTP 400: Cannot initialize WeatherVariable",
    });
    expect(await runBinding(weather, "forecast", { latitude: 91, longitude: 0 }, local())).toMatchObject({
      ok: false,
      error: "latitude must be between -90 and 90",
    });
  });

  it("cannot reach a host that is not allowed", async () => {
    const result = await runBinding(
      weather,
      "find_place",
      { name: "Oslo" },
      { env: local().env, allowedHosts: ["api.open-meteo.com"] },
    );
    expect(result.ok).toBe(false);
    expect((result as { error: string }).error).toMatch(/not allowed/);
  });
});
