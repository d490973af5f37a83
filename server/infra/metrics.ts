/**
 * The process's Prometheus metrics (prom-client): runs by outcome and gate decisions by category
 * and decision (counted from the engine's events as this process publishes them), approval wait,
 * sandbox queue wait and upstream MCP call latency (the core's telemetry measures), gauges read at
 * scrape time from the sources the composition root registers (pending approvals, sandbox queue
 * and workers, upstream server status), notification deliveries, and the process's own memory and
 * event-loop lag. Labels are names, categories, decisions and outcomes only: never argument values.
 */
import client from "prom-client";
import type { EngineEvent, EventPublisher } from "../core/gate/ports";
import type { EngineMeasure } from "../core/telemetry";
import { processSingleton } from "./process-singletons";

/** What the gauges read at scrape time; each source is asked once per scrape. */
export interface MetricsSnapshot {
  pendingApprovals?: number;
  sandbox?: { workers: number; runningJobs: number; queuedJobs: number; parkedJobs: number };
  /** Upstream MCP servers by name: their connection status (ready, error, unauthorized, ...). */
  upstreams?: { name: string; status: string }[];
}

export type MetricsSource = () => Promise<MetricsSnapshot> | MetricsSnapshot;

export interface Metrics {
  readonly registry: client.Registry;
  countEvent(event: EngineEvent): void;
  observe(measure: EngineMeasure, value: number, labels?: Readonly<Record<string, string>>): void;
  /** A notification delivery (webhook, web push, email) and whether it went through. */
  countDelivery(channel: string, ok: boolean): void;
  /** Adds (or replaces, by name) a source the gauges read at scrape time; returns its removal. */
  setSource(name: string, source: MetricsSource): () => void;
  /** The Prometheus text exposition. */
  render(): Promise<string>;
  readonly contentType: string;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const HUMAN_SECONDS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];
const UPSTREAM_STATES = ["new", "connecting", "ready", "error", "unauthorized", "stopped"];

export function createMetrics(): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  const sources = new Map<string, MetricsSource>();
  let snapshot: Promise<MetricsSnapshot> | undefined;
  /** One read of every source per scrape, shared by the gauges' collect(). */
  const read = () => {
    snapshot ??= Promise.all(
      [...sources.values()].map(async (source) => {
        try {
          return await source();
        } catch {
          return {};
        }
      }),
    ).then((parts) => Object.assign({}, ...parts) as MetricsSnapshot);
    return snapshot;
  };

  const runs = new client.Counter({
    name: "toolstore_runs_total",
    help: "Action runs finished in this process, by outcome (ok, or the envelope's error kind).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const decisions = new client.Counter({
    name: "toolstore_gate_decisions_total",
    help: "Gate decisions made in this process, by capability category and decision.",
    labelNames: ["category", "decision"],
    registers: [registry],
  });
  const approvalWait = new client.Histogram({
    name: "toolstore_approval_wait_seconds",
    help: "Time a capability call waited for a human's answer, by category and outcome.",
    labelNames: ["category", "outcome"],
    buckets: HUMAN_SECONDS,
    registers: [registry],
  });
  const queueWait = new client.Histogram({
    name: "toolstore_sandbox_queue_wait_seconds",
    help: "Time an action waited for a sandbox worker.",
    buckets: SECONDS,
    registers: [registry],
  });
  const upstreamCall = new client.Histogram({
    name: "toolstore_upstream_call_seconds",
    help: "Latency of tools/call requests to upstream MCP servers, by server and outcome.",
    labelNames: ["server", "outcome"],
    buckets: SECONDS,
    registers: [registry],
  });
  const deliveries = new client.Counter({
    name: "toolstore_notification_deliveries_total",
    help: "Notification deliveries (webhook, web push, email), by channel and outcome.",
    labelNames: ["channel", "outcome"],
    registers: [registry],
  });
  new client.Gauge({
    name: "toolstore_approvals_pending",
    help: "Approval requests waiting for a human (all instances).",
    registers: [registry],
    async collect() {
      this.set((await read()).pendingApprovals ?? 0);
    },
  });
  const sandboxGauge = (
    name: string,
    help: string,
    pick: (s: NonNullable<MetricsSnapshot["sandbox"]>) => number,
  ) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const sandbox = (await read()).sandbox;
        this.set(sandbox ? pick(sandbox) : 0);
      },
    });
  sandboxGauge("toolstore_sandbox_workers", "Sandbox worker threads alive.", (s) => s.workers);
  sandboxGauge("toolstore_sandbox_queue_depth", "Actions waiting for a sandbox worker.", (s) => s.queuedJobs);
  sandboxGauge(
    "toolstore_sandbox_running",
    "Actions and bindings held by sandbox workers.",
    (s) => s.runningJobs,
  );
  sandboxGauge(
    "toolstore_sandbox_parked",
    "Runs whose clock is suspended while a human decides.",
    (s) => s.parkedJobs,
  );
  new client.Gauge({
    name: "toolstore_upstream_status",
    help: "Upstream MCP servers' connection status: 1 for the server's current status, 0 for the others.",
    labelNames: ["server", "status"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const upstream of (await read()).upstreams ?? []) {
        for (const status of new Set([...UPSTREAM_STATES, upstream.status])) {
          this.set({ server: upstream.name, status }, status === upstream.status ? 1 : 0);
        }
      }
    },
  });

  return {
    registry,
    countEvent(event) {
      if (event.type === "run.finished")
        runs.inc({ outcome: event.ok ? "ok" : (event.errorKind ?? "error") });
      else if (event.type === "gate.decision")
        decisions.inc({ category: event.category, decision: event.decision });
    },
    observe(measure, value, labels = {}) {
      if (!Number.isFinite(value) || value < 0) return;
      if (measure === "approval_wait") approvalWait.observe(pick(labels, ["category", "outcome"]), value);
      else if (measure === "sandbox_queue_wait") queueWait.observe(value);
      else if (measure === "upstream_call") upstreamCall.observe(pick(labels, ["server", "outcome"]), value);
    },
    countDelivery(channel, ok) {
      deliveries.inc({ channel, outcome: ok ? "delivered" : "failed" });
    },
    setSource(name, source) {
      sources.set(name, source);
      return () => {
        if (sources.get(name) === source) sources.delete(name);
      };
    },
    async render() {
      snapshot = undefined;
      try {
        return await registry.metrics();
      } finally {
        snapshot = undefined;
      }
    },
    contentType: registry.contentType,
  };
}

function pick(labels: Readonly<Record<string, string>>, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) out[name] = labels[name] ?? "";
  return out;
}

/** The process's metrics (shared by every route bundle). */
export function getMetrics(): Metrics {
  return processSingleton("metrics", createMetrics);
}

/** An event publisher that also counts what it publishes. */
export function meteredEvents(events: EventPublisher, metrics: Metrics = getMetrics()): EventPublisher {
  return {
    publish(event, options) {
      metrics.countEvent(event);
      return events.publish(event, options);
    },
  };
}
