/**
 * The core's telemetry port (server/core/telemetry.ts) over the OpenTelemetry SDK: a tracer
 * provider with a batching OTLP/HTTP exporter (http/protobuf or http/json), W3C trace context, and
 * AsyncLocalStorage so a span stays active across awaits. The exporter reads the standard
 * OTEL_EXPORTER_OTLP_* variables itself (endpoint, headers, timeout, compression); the resource
 * reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
 */
import {
  type Context,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { SpanAttributes, SpanOptions, Telemetry, TraceContext, TraceSpan } from "../core/telemetry";
import type { TRACES_SAMPLERS } from "../env";

export interface OtelTracingOptions {
  /** Where spans go; default the OTLP/HTTP exporter for `protocol`. */
  exporter?: SpanExporter;
  protocol?: "http/protobuf" | "http/json";
  sampler?: (typeof TRACES_SAMPLERS)[number];
  samplerArg?: number;
  /** Export each span as it ends (tests); default batched. */
  simple?: boolean;
  /** OTEL_SERVICE_NAME; default "toolstore". */
  serviceName?: string;
  serviceVersion?: string;
}

export interface OtelTracing extends Omit<Telemetry, "observe"> {
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

const KINDS = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT } as const;

function samplerOf(name: OtelTracingOptions["sampler"], arg: number | undefined): Sampler {
  const ratio = new TraceIdRatioBasedSampler(arg ?? 1);
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return ratio;
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function clean(attributes: SpanAttributes | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  if (!attributes) return out;
  for (const [key, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null) out[key] = value;
  }
  return out;
}

class OtelSpan implements TraceSpan {
  constructor(readonly inner: Span) {}
  setAttributes(attributes: SpanAttributes) {
    this.inner.setAttributes(clean(attributes));
  }
  addEvent(name: string, attributes?: SpanAttributes) {
    this.inner.addEvent(name, clean(attributes));
  }
  fail(errorType: string, message?: string) {
    this.inner.setAttribute("error.type", errorType);
    this.inner.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
  }
  end() {
    this.inner.end();
  }
}

/** An OpenTelemetry Context as the core's opaque TraceContext, and back. */
const wrap = (ctx: Context) => ctx as unknown as TraceContext;
const unwrap = (ctx: TraceContext | undefined): Context | undefined =>
  ctx && typeof (ctx as unknown as Context).getValue === "function" ? (ctx as unknown as Context) : undefined;

let contextManager: AsyncLocalStorageContextManager | undefined;

export function createOtelTracing(options: OtelTracingOptions = {}): OtelTracing {
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const exporter =
    options.exporter ?? (options.protocol === "http/json" ? new JsonExporter() : new ProtoExporter());
  const resource = detectResources({ detectors: [envDetector] }).merge(
    resourceFromAttributes({
      "service.name": options.serviceName ?? "toolstore",
      ...(options.serviceVersion ? { "service.version": options.serviceVersion } : {}),
    }),
  );
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(options.sampler, options.samplerArg),
    spanProcessors: [
      options.simple ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter }),
    ],
  });
  const tracer = provider.getTracer("toolstore", options.serviceVersion);
  const propagator = new W3CTraceContextPropagator();
  const active = () => context.active();

  return {
    tracing: true,
    startSpan(name: string, spanOptions: SpanOptions = {}) {
      const parent = unwrap(spanOptions.parent) ?? active();
      const span = tracer.startSpan(
        name,
        { kind: KINDS[spanOptions.kind ?? "internal"], attributes: clean(spanOptions.attributes) },
        parent,
      );
      return new OtelSpan(span);
    },
    contextWith(span, parent) {
      const base = unwrap(parent) ?? active();
      return span instanceof OtelSpan ? wrap(trace.setSpan(base, span.inner)) : wrap(base);
    },
    current: () => wrap(active()),
    run: (ctx, fn) => {
      const otel = unwrap(ctx);
      return otel ? context.with(otel, fn) : fn();
    },
    inject(carrier, ctx) {
      propagator.inject(unwrap(ctx) ?? active(), carrier, defaultTextMapSetter);
    },
    extract(carrier) {
      if (typeof carrier.traceparent !== "string") return undefined;
      const text: Record<string, string> = { traceparent: carrier.traceparent };
      if (typeof carrier.tracestate === "string") text.tracestate = carrier.tracestate;
      const extracted = propagator.extract(ROOT_CONTEXT, text, defaultTextMapGetter);
      return trace.getSpanContext(extracted) ? wrap(extracted) : undefined;
    },
    ids(ctx) {
      const spanContext = trace.getSpanContext(unwrap(ctx) ?? active());
      if (!spanContext || !trace.isSpanContextValid(spanContext)) return undefined;
      return { traceId: spanContext.traceId, spanId: spanContext.spanId };
    },
    forceFlush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
