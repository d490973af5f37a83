/**
 * Installs the process's telemetry once: metrics always (their measures feed /metrics), traces
 * only when OTEL_EXPORTER_OTLP_ENDPOINT (or its _TRACES_ form) is set and OpenTelemetry is not
 * disabled (OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none).
 */
import { installTelemetry, NOOP_TELEMETRY, type Telemetry } from "../core/telemetry";
import { type Env, loadEnv } from "../env";
import { getMetrics, type Metrics } from "./metrics";
import { dropProcessSingleton, processSingleton } from "./process-singletons";
import { createOtelTracing, type OtelTracing, type OtelTracingOptions } from "./telemetry-otel";

export interface ProcessTelemetry {
  telemetry: Telemetry;
  metrics: Metrics;
  /** The tracer, when traces are on. */
  tracing: OtelTracing | undefined;
  /** Sends the spans still batched (shutdown, tests). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export function tracingOptionsFromEnv(env: Env): OtelTracingOptions | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || env.OTEL_SDK_DISABLED || env.OTEL_TRACES_EXPORTER === "none") return undefined;
  const protocol =
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || "http/protobuf";
  return {
    protocol: protocol === "http/json" ? "http/json" : "http/protobuf",
    ...(env.OTEL_TRACES_SAMPLER ? { sampler: env.OTEL_TRACES_SAMPLER } : {}),
    ...(env.OTEL_TRACES_SAMPLER_ARG === undefined ? {} : { samplerArg: env.OTEL_TRACES_SAMPLER_ARG }),
    ...(env.OTEL_SERVICE_NAME ? { serviceName: env.OTEL_SERVICE_NAME } : {}),
  };
}

/** Builds and installs telemetry from explicit options (tests) or the environment. */
export function startTelemetry(tracingOptions: OtelTracingOptions | undefined): ProcessTelemetry {
  const metrics = getMetrics();
  const tracing = tracingOptions ? createOtelTracing(tracingOptions) : undefined;
  const telemetry: Telemetry = {
    ...(tracing ?? NOOP_TELEMETRY),
    observe: metrics.observe,
  };
  installTelemetry(telemetry);
  return {
    telemetry,
    metrics,
    tracing,
    flush: async () => tracing?.forceFlush(),
    async shutdown() {
      await tracing?.shutdown();
      installTelemetry(undefined);
    },
  };
}

const TELEMETRY = "telemetry";

/** The process's telemetry, installed on first use from server/env.ts. */
export function processTelemetry(env?: Env): ProcessTelemetry {
  return processSingleton(TELEMETRY, () => startTelemetry(tracingOptionsFromEnv(env ?? loadEnv())));
}

/** Stops the process's telemetry (tests that start their own). */
export async function stopProcessTelemetry(): Promise<void> {
  const current = processSingleton<ProcessTelemetry | undefined>(TELEMETRY, () => undefined);
  dropProcessSingleton(TELEMETRY, current);
  await current?.shutdown();
}
