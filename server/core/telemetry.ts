/**
 * The engine's telemetry port: spans (tracing) and measurements (metrics), with a no-op default.
 * The core starts spans and observes values through `telemetry()`; what records them (the
 * OpenTelemetry SDK, prom-client) is installed above it (server/infra/telemetry-otel.ts,
 * server/infra/metrics.ts). Like OpenTelemetry's own API, the installed implementation lives on
 * globalThis, so separately bundled route handlers share it. Nothing here may carry an argument
 * value or a secret: attributes are names, categories, decisions, codes and sizes.
 */

export type SpanAttributeValue = string | number | boolean;
export type SpanAttributes = Readonly<Record<string, SpanAttributeValue | null | undefined>>;

export interface TraceSpan {
  setAttributes(attributes: SpanAttributes): void;
  addEvent(name: string, attributes?: SpanAttributes): void;
  /** Marks the span failed: `errorType` is a code or class name, `message` a text without values. */
  fail(errorType: string, message?: string): void;
  end(): void;
}

/**
 * A trace context (a span that becomes the parent of the next), opaque to the core. It is carried
 * by hand across boundaries that the runtime's own async context does not follow (a sandbox
 * worker's messages).
 */
export interface TraceContext {
  readonly __traceContext: true;
}

export interface SpanOptions {
  kind?: "internal" | "server" | "client";
  attributes?: SpanAttributes;
  /** The parent; default: the active context. */
  parent?: TraceContext;
}

/** Measured values the engine reports (metrics/names in server/infra/metrics.ts). */
export type EngineMeasure =
  /** Seconds a run waited for a sandbox worker. */
  | "sandbox_queue_wait"
  /** Seconds a capability call waited for a human (labels: capability's category, outcome). */
  | "approval_wait"
  /** Seconds of one upstream MCP tools/call (labels: server, outcome). */
  | "upstream_call";

export interface Telemetry {
  /** Whether spans are recorded (when false every span is a no-op and costs nothing). */
  readonly tracing: boolean;
  startSpan(name: string, options?: SpanOptions): TraceSpan;
  /** The context in which `span` is the active span (child of `parent`, default the active one). */
  contextWith(span: TraceSpan, parent?: TraceContext): TraceContext;
  /** The active context now; capture it before crossing a boundary. */
  current(): TraceContext;
  /** Runs `fn` (and what it awaits) with `context` active. */
  run<T>(context: TraceContext, fn: () => T): T;
  /** Writes the W3C `traceparent` (and `tracestate`) of `context` (default: active) into `carrier`. */
  inject(carrier: Record<string, unknown>, context?: TraceContext): void;
  /** The context a W3C `traceparent` in `carrier` names, else undefined. */
  extract(carrier: Readonly<Record<string, unknown>>): TraceContext | undefined;
  /** Trace and span id of `context` (default: active), for log lines; undefined without a trace. */
  ids(context?: TraceContext): { traceId: string; spanId: string } | undefined;
  observe(measure: EngineMeasure, value: number, labels?: Readonly<Record<string, string>>): void;
}

const NOOP_SPAN: TraceSpan = Object.freeze({
  setAttributes() {},
  addEvent() {},
  fail() {},
  end() {},
});
const NOOP_CONTEXT: TraceContext = Object.freeze({ __traceContext: true as const });

export const NOOP_TELEMETRY: Telemetry = Object.freeze({
  tracing: false,
  startSpan: () => NOOP_SPAN,
  contextWith: () => NOOP_CONTEXT,
  current: () => NOOP_CONTEXT,
  run: <T>(_context: TraceContext, fn: () => T) => fn(),
  inject() {},
  extract: () => undefined,
  ids: () => undefined,
  observe() {},
});

const KEY = Symbol.for("toolstore.telemetry");
type Holder = typeof globalThis & { [KEY]?: Telemetry };

/** The installed telemetry, or the no-op one. */
export function telemetry(): Telemetry {
  return (globalThis as Holder)[KEY] ?? NOOP_TELEMETRY;
}

/** Installs the process's telemetry (the composition root does, once); returns the previous. */
export function installTelemetry(next: Telemetry | undefined): Telemetry | undefined {
  const holder = globalThis as Holder;
  const previous = holder[KEY];
  if (next) holder[KEY] = next;
  else delete holder[KEY];
  return previous;
}
