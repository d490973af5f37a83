/**
 * The operations settings as server/env.ts reads them (bad values fail with the variable's name
 * and the fix), which of them turn traces on, and the logger's two formats.
 */
import { describe, expect, it } from "vitest";
import { loadEnv as load } from "../env";
import { createLogger } from "./log";
import { tracingOptionsFromEnv } from "./telemetry-setup";

const loadEnv = (vars: Record<string, string | undefined>) => load(vars as NodeJS.ProcessEnv);

describe("[OPERATE] settings", () => {
  it("TOOLSTORE_METRICS is local by default, off, or a token of 16+ characters", () => {
    expect(loadEnv({}).TOOLSTORE_METRICS).toEqual({ access: "local" });
    expect(loadEnv({ TOOLSTORE_METRICS: "off" }).TOOLSTORE_METRICS).toEqual({ access: "off" });
    expect(loadEnv({ TOOLSTORE_METRICS: "scrape-token-0123456789" }).TOOLSTORE_METRICS).toEqual({
      access: "token",
      token: "scrape-token-0123456789",
    });
    expect(() => loadEnv({ TOOLSTORE_METRICS: "short" })).toThrow(
      /TOOLSTORE_METRICS is invalid: use local, off, or a token of at least 16 characters/,
    );
  });

  it("traces are on only with an OTLP endpoint, not disabled; gRPC is refused by name", () => {
    expect(tracingOptionsFromEnv(loadEnv({}))).toBeUndefined();
    expect(tracingOptionsFromEnv(loadEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }))).toEqual({
      protocol: "http/protobuf",
    });
    expect(
      tracingOptionsFromEnv(
        loadEnv({
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces",
          OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
          OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
          OTEL_TRACES_SAMPLER_ARG: "0.25",
          OTEL_SERVICE_NAME: "ts-1",
        }),
      ),
    ).toEqual({
      protocol: "http/json",
      sampler: "parentbased_traceidratio",
      samplerArg: 0.25,
      serviceName: "ts-1",
    });
    for (const off of [{ OTEL_SDK_DISABLED: "true" }, { OTEL_TRACES_EXPORTER: "none" }]) {
      expect(
        tracingOptionsFromEnv(loadEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", ...off })),
      ).toBeUndefined();
    }
    expect(() => loadEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL is invalid: grpc is not supported here; use http\/protobuf/,
    );
    expect(() => loadEnv({ TOOLSTORE_LOG_FORMAT: "yaml" })).toThrow(
      /TOOLSTORE_LOG_FORMAT is invalid: use text or json/,
    );
  });

  it("the text format is the plain line, masked; the JSON format is one object per line", () => {
    const lines: [string, string][] = [];
    const write = (line: string, level: string) => lines.push([level, line]);
    createLogger({ format: "text", write }).info("database: postgresql://app:hunter22@db/ts ready");
    createLogger({ format: "json", write, component: "start", now: () => new Date(0) }).warn(
      "key tsk_abcdef123456 used",
      { run_id: "r1", n: 3, skipped: undefined },
    );
    expect(lines[0]).toEqual(["info", "database: postgresql://app:***@db/ts ready"]);
    expect(lines[1]?.[0]).toBe("warn");
    expect(JSON.parse(lines[1]?.[1] ?? "")).toEqual({
      time: "1970-01-01T00:00:00.000Z",
      level: "warn",
      msg: "key tsk_*** used",
      component: "start",
      run_id: "r1",
      n: 3,
    });
  });
});
