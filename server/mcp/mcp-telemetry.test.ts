/**
 * Operating ToolStore with real parts: an OTLP/HTTP receiver started here (http/protobuf, then
 * http/json), the SDK's own MCP Client sending a W3C `traceparent`, the real MCP mount, engine,
 * sandbox and SQLite file, `@modelcontextprotocol/server-memory` over stdio, an SDK upstream over
 * HTTP that records the `_meta` it is sent, the shipped `webhook` toolset posting to a receiver
 * here, approvals answered as a person would. Then /metrics parsed as Prometheus text, /readyz
 * against a file locked by another process, and every span, metric and log line scanned for the
 * probe strings (an argument value and a secret value).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDb, type Db } from "../db";
import { deployMigrations } from "../db/migrate";
import { createPrismaPorts, type ServerEngine, startServerEngine } from "../engine";
import { createOpsHandlers, type OpsHandlers } from "../http/ops";
import { createDbProbe } from "../infra/db-probe";
import { createLogger, registerLogSecrets } from "../infra/log";
import { getMetrics } from "../infra/metrics";
import { type ProcessTelemetry, startTelemetry } from "../infra/telemetry-setup";
import { type OtlpReceiver, startOtlpReceiver } from "../infra/testing/otlp-receiver";
import { parsePrometheusText, sampleValue } from "../infra/testing/prom-text";
import { categorizeTools, parseCategorizeRule, saveServer } from "../modules/mcp-servers";
import { syncToolsetsFolder } from "../modules/toolsets";
import { setToolsetEnvVar, updateToolsetSettings } from "../modules/toolsets/toolset-settings";
import { createApiKey } from "../services/api-keys";
import { createMcpHttpHandler } from "./http";
import { createMcpBackend } from "./mcp-backend";
import { serveFetchHandler } from "./node-adapter";

const ROOT = path.resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(path.join(tmpdir(), "toolstore-otel-"));
const dbFile = path.join(dir, "otel.db");
/** An argument value and a secret value: neither may reach a span, a metric or a log line. */
const ARG_PROBE = "argprobe-q7v2k9";
const SECRET_PROBE = "secretprobe-Zx81Lm4tPq";
const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";

let db: Db;
let engine: ServerEngine;
let userId: string;
let apiKey: string;
let mcp: { url: string; close(): Promise<void> };
let otlp: OtlpReceiver;
let telemetry: ProcessTelemetry;
let ops: OpsHandlers;
let upstream: Server;
let hook: Server;
/** What the HTTP upstream and the webhook receiver were sent. */
const upstreamMeta: Record<string, unknown>[] = [];
const hookHeaders: Record<string, string | string[] | undefined>[] = [];
const logLines: string[] = [];
let approving = true;

function notesServer(): McpServer {
  const server = new McpServer({ name: "notes", version: "1" });
  server.registerTool(
    "lookup",
    { description: "Look a note up.", inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } },
    async ({ q }, extra) => {
      upstreamMeta.push({ ...(extra._meta ?? {}) });
      return { content: [{ type: "text", text: `found ${q.length} chars` }] };
    },
  );
  return server;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Answers every pending approval "allow once", as the person at the console would. */
async function approver() {
  while (approving) {
    const pending = await db.approval.findMany({ where: { status: "pending" } });
    for (const a of pending) {
      await engine.approvals
        .decide({ approvalId: a.id, answer: "once", decidedBy: { userId, label: "ops" } })
        .catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 30));
  }
}

async function connect(headers: Record<string, string> = {}) {
  const client = new Client({ name: "otel-test", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcp.url), {
      requestInit: { headers: { Authorization: `Bearer ${apiKey}`, ...headers } },
    }),
  );
  return client;
}

async function execute(client: Client, code: string, meta?: Record<string, string>) {
  const result = (await client.callTool(
    { name: "execute_code", arguments: { code }, ...(meta ? { _meta: meta } : {}) },
    undefined,
    { timeout: 90_000 },
  )) as { content: { type: string; text?: string }[] };
  return JSON.parse(result.content.find((c) => c.type === "text")?.text ?? "{}") as {
    ok: boolean;
    result?: unknown;
    error?: unknown;
    calls: { capability: string; decision: string }[];
  };
}

async function spansOf(traceId: string, atLeast: number) {
  for (let i = 0; i < 100; i++) {
    await telemetry.flush();
    const found = otlp.spans.filter((s) => s.traceId === traceId);
    if (found.length >= atLeast) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  return otlp.spans.filter((s) => s.traceId === traceId);
}

const ACTION = `import { create_entities } from "toolstore/memory";
import { lookup } from "toolstore/notes";
import { send } from "toolstore/webhook";
export default async function () {
  await create_entities({ entities: [{ name: "${ARG_PROBE}", entityType: "probe", observations: ["${ARG_PROBE}"] }] });
  const found = await lookup({ q: "${ARG_PROBE}" });
  const sent = await send({ event: "probe.sent", data: { value: "${ARG_PROBE}" } });
  return { found, delivered: sent.delivered };
}`;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  // The exporter reads the standard variable itself, as in production.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
  telemetry = startTelemetry({ protocol: "http/protobuf", serviceName: "toolstore-test" });

  upstream = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = notesServer();
    res.on("close", () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  const upstreamUrl = `${await listen(upstream)}/mcp`;
  hook = createServer((req, res) => {
    hookHeaders.push(req.headers);
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'));
  });
  const hookUrl = await listen(hook);

  const target = { provider: "sqlite" as const, url: dbFile };
  await deployMigrations(target);
  db = createDb(target);
  userId = (
    await db.user.create({ data: { username: "ops", displayName: "Ops", role: "admin", passwordHash: "x" } })
  ).id;
  const sync = await syncToolsetsFolder(db, path.join(ROOT, "toolsets"));
  expect(sync.failed).toEqual([]);
  await setToolsetEnvVar(db, { toolset: "webhook", name: "WEBHOOK_URL", value: `${hookUrl}/hook` });
  await setToolsetEnvVar(db, { toolset: "webhook", name: "WEBHOOK_TOKEN", value: SECRET_PROBE });
  await updateToolsetSettings(db, "webhook", { allowedHosts: ["127.0.0.1"] });

  engine = await startServerEngine({ db, ports: createPrismaPorts(db), approvalTtlMs: 60_000, workers: 1 });
  await saveServer(db, {
    name: "memory",
    transport: "stdio",
    command: process.execPath,
    args: [path.join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")],
    env: { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") },
  });
  await saveServer(db, { name: "notes", transport: "http", url: upstreamUrl });
  for (const name of ["memory", "notes"]) {
    await engine.sources.mcp.source.refresh(name);
    await categorizeTools(db, name, [parseCategorizeRule("*=proposed")], null);
  }
  engine.registry.invalidate();
  apiKey = (await createApiKey(db, userId, { name: "otel", mode: "default" })).key;

  const backend = createMcpBackend({ db, engine: async () => engine, publicUrl: "http://console.test" });
  mcp = await serveFetchHandler(
    createMcpHttpHandler({
      db,
      backend,
      consoleUrl: "http://console.test",
      allowedOrigins: [],
      rateLimitPerMinute: 1000,
    }),
  );
  ops = createOpsHandlers({
    probe: createDbProbe(db, target),
    pool: async () => engine.pool,
    metrics: getMetrics(),
    access: { access: "token", token: "scrape-token-0123456789" },
    listenHost: "0.0.0.0",
    trustProxy: false,
  });
  void approver();
}, 120_000);

afterAll(async () => {
  approving = false;
  await mcp?.close();
  await engine?.shutdown();
  await telemetry?.shutdown();
  await otlp?.close();
  await new Promise((r) => upstream?.close(r));
  await new Promise((r) => hook?.close(r));
  await db?.$disconnect();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  rmSync(dir, { recursive: true, force: true });
});

describe("[OPERATE] traces", () => {
  let spans: Awaited<ReturnType<typeof spansOf>> = [];

  it("one execute_code that waits for approvals, calls server-memory, an HTTP upstream and a toolset's egress is one trace under the client's traceparent", async () => {
    const client = await connect();
    const envelope = await execute(client, ACTION, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
    await client.close();
    expect(envelope.ok, JSON.stringify(envelope.error)).toBe(true);
    expect(envelope.calls.map((c) => [c.capability, c.decision])).toEqual([
      ["memory.create_entities", "allow"],
      ["notes.lookup", "allow"],
      ["webhook.send", "allow"],
    ]);
    // The run, three calls, two approval waits, the sandbox, two upstream calls, one egress request.
    spans = await spansOf(CLIENT_TRACE, 11);
    const byName = (name: string) => spans.filter((s) => s.name === name);
    expect(otlp.contentTypes[0]).toBe("application/x-protobuf");

    const request = byName("tools/call execute_code")[0];
    expect(request).toMatchObject({ kind: 2, parentSpanId: CLIENT_SPAN, service: "toolstore-test" });
    expect(request?.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "execute_code",
    });
    const run = byName("toolstore.run")[0];
    expect(run?.parentSpanId).toBe(request?.spanId);
    expect(run?.attributes).toMatchObject({
      "toolstore.surface": "mcp",
      "toolstore.mode": "default",
      "toolstore.run.ok": true,
    });
    expect(byName("toolstore.sandbox.run")[0]?.parentSpanId).toBe(run?.spanId);

    const call = byName("execute_tool memory.create_entities")[0];
    expect(call?.parentSpanId).toBe(run?.spanId);
    expect(call?.attributes).toMatchObject({
      "toolstore.capability": "memory.create_entities",
      "toolstore.category": "write",
      "toolstore.decision": "allow",
      "toolstore.decision.reason": "approved once",
      "toolstore.decision.via": "approval",
    });
    const waits = byName("toolstore.approval.wait");
    expect(waits.map((w) => w.attributes["toolstore.approval.status"])).toEqual(["allowed", "allowed"]);
    expect(waits.some((w) => w.parentSpanId === call?.spanId)).toBe(true);

    const memoryCall = byName("tools/call create_entities")[0];
    expect(memoryCall).toMatchObject({ kind: 3, parentSpanId: call?.spanId });
    expect(memoryCall?.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "toolstore.capability": "memory.create_entities",
      "toolstore.category": "write",
      "toolstore.decision": "allow",
      "network.transport": "pipe",
    });
  });

  it("passes the trace context on: the upstream MCP server gets it in _meta, the toolset's egress in the traceparent header", async () => {
    const lookupSpan = spans.find((s) => s.name === "tools/call lookup");
    expect(lookupSpan?.attributes["server.address"]).toBe("127.0.0.1");
    expect(upstreamMeta.at(-1)?.traceparent).toBe(`00-${CLIENT_TRACE}-${lookupSpan?.spanId}-01`);

    const egress = spans.find((s) => s.name === "POST");
    const send = spans.find((s) => s.name === "execute_tool webhook.send");
    expect(egress).toMatchObject({ kind: 3, parentSpanId: send?.spanId });
    expect(egress?.attributes).toMatchObject({
      "http.request.method": "POST",
      "server.address": "127.0.0.1",
      "http.response.status_code": 200,
    });
    const sent = hookHeaders.at(-1);
    expect(sent?.traceparent).toBe(`00-${CLIENT_TRACE}-${egress?.spanId}-01`);
    // The secret did go out, where the toolset declared it: the scan below is not vacuous.
    expect(sent?.authorization).toBe(`Bearer ${SECRET_PROBE}`);
  });

  it("a traceparent HTTP header continues the client's trace too (http/json export)", async () => {
    await telemetry.shutdown();
    telemetry = startTelemetry({ protocol: "http/json", serviceName: "toolstore-test" });
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const client = await connect({ traceparent: `00-${traceId}-b7ad6b7169203331-01` });
    const envelope = await execute(client, `export default async function () { return 1; }`);
    await client.close();
    expect(envelope.ok).toBe(true);
    const found = await spansOf(traceId, 3);
    expect(otlp.contentTypes.at(-1)).toContain("application/json");
    const request = found.find((s) => s.name === "tools/call execute_code");
    expect(request?.parentSpanId).toBe("b7ad6b7169203331");
    expect(found.find((s) => s.name === "toolstore.run")?.parentSpanId).toBe(request?.spanId);
  });
});

describe("[OPERATE] metrics, health, logs", () => {
  async function scrape() {
    const res = await ops.metrics(
      new Request("http://t/metrics", { headers: { authorization: "Bearer scrape-token-0123456789" } }),
    );
    expect(res.status).toBe(200);
    const text = await res.text();
    return { text, families: parsePrometheusText(text) };
  }

  it("/metrics parses as Prometheus text and its counters move with the runs", async () => {
    const before = await scrape();
    expect(before.families.get("toolstore_runs_total")?.type).toBe("counter");
    expect(before.families.get("toolstore_approval_wait_seconds")?.type).toBe("histogram");
    for (const name of [
      "toolstore_gate_decisions_total",
      "toolstore_approvals_pending",
      "toolstore_sandbox_queue_depth",
      "toolstore_sandbox_queue_wait_seconds",
      "toolstore_sandbox_workers",
      "toolstore_upstream_status",
      "toolstore_upstream_call_seconds",
      "toolstore_notification_deliveries_total",
      "process_resident_memory_bytes",
      "nodejs_eventloop_lag_seconds",
    ]) {
      expect(before.families.has(name), name).toBe(true);
    }
    expect(sampleValue(before.families, "toolstore_sandbox_workers")).toBeGreaterThan(0);
    expect(
      sampleValue(before.families, "toolstore_upstream_status", { server: "memory", status: "ready" }),
    ).toBe(1);
    expect(
      sampleValue(before.families, "toolstore_approval_wait_seconds_count", {
        category: "write",
        outcome: "allowed",
      }),
    ).toBe(2);

    const client = await connect();
    const ok = `import { read_graph } from "toolstore/memory";
export default async function () { await read_graph({}); return 1; }`;
    for (let i = 0; i < 3; i++) expect((await execute(client, ok)).ok).toBe(true);
    expect((await execute(client, `export default async function () { throw new Error("no"); }`)).ok).toBe(
      false,
    );
    await client.close();

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      sampleValue(after.families, name, labels) - sampleValue(before.families, name, labels);
    expect(delta("toolstore_runs_total", { outcome: "ok" })).toBe(3);
    expect(delta("toolstore_runs_total", { outcome: "threw" })).toBe(1);
    expect(delta("toolstore_gate_decisions_total", { category: "read", decision: "allow" })).toBe(3);
    expect(delta("toolstore_upstream_call_seconds_count", { server: "memory", outcome: "ok" })).toBe(3);
  });

  it("/metrics refuses a scraper without the token, and TOOLSTORE_METRICS=local refuses a remote client", async () => {
    expect((await ops.metrics(new Request("http://t/metrics"))).status).toBe(401);
    const local = createOpsHandlers({
      probe: createDbProbe(db, { provider: "sqlite", url: dbFile }),
      pool: async () => engine.pool,
      metrics: getMetrics(),
      access: { access: "local" },
      listenHost: "0.0.0.0",
      trustProxy: false,
    });
    const req = new Request("http://t/metrics");
    expect((await local.metrics(req, { remoteAddress: "127.0.0.1" })).status).toBe(200);
    expect((await local.metrics(req, { remoteAddress: "::ffff:127.0.0.1" })).status).toBe(200);
    const remote = await local.metrics(req, { remoteAddress: "10.1.2.3" });
    expect(remote.status).toBe(403);
    expect(await remote.text()).toMatch(/TOOLSTORE_METRICS/);
    // Without the connection's address, only a server listening on loopback knows its clients are local.
    expect((await local.metrics(req)).status).toBe(403);
  });

  it("/healthz answers; /readyz fails while the database file is locked by another process and recovers after", async () => {
    expect((await ops.healthz(new Request("http://t/healthz"))).status).toBe(200);
    const ready = await ops.readyz(new Request("http://t/readyz"));
    expect(ready.status, await ready.clone().text()).toBe(200);

    const script = `const D=require(${JSON.stringify(path.join(ROOT, "node_modules/better-sqlite3"))});const d=new D(${JSON.stringify(dbFile)});d.pragma("busy_timeout=0");d.exec("BEGIN IMMEDIATE");d.prepare("INSERT INTO Setting(key,value,updatedAt) VALUES('otel-lock','x',0)").run();process.stdout.write("locked\\n");process.stdin.on("data",()=>{d.exec("ROLLBACK");process.exit(0)});`;
    const lock = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
    await new Promise((r) => lock.stdout.once("data", r));
    const locked = await ops.readyz(new Request("http://t/readyz"));
    const body = (await locked.json()) as { checks: { database: { ok: boolean; message: string } } };
    expect(locked.status).toBe(503);
    expect(body.checks.database).toMatchObject({ ok: false, message: expect.stringMatching(/locked/) });
    lock.stdin.write("go\n");
    await new Promise((r) => lock.once("exit", r));
    expect((await ops.readyz(new Request("http://t/readyz"))).status).toBe(200);
  });

  it("JSON log lines carry the trace and run ids and mask secrets as everywhere else", async () => {
    registerLogSecrets([SECRET_PROBE]);
    const log = createLogger({ format: "json", component: "test", write: (line) => logLines.push(line) });
    const t = telemetry.telemetry;
    const span = t.startSpan("log-test");
    t.run(t.contextWith(span), () =>
      log.error(`upstream said Bearer ${SECRET_PROBE} for ${SECRET_PROBE}`, {
        run_id: "run-1",
        url: `postgresql://u:${SECRET_PROBE}@h/db`,
      }),
    );
    span.end();
    const line = JSON.parse(logLines[0] ?? "{}") as Record<string, string>;
    expect(line).toMatchObject({ level: "error", component: "test", run_id: "run-1" });
    expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(line.msg).toBe("upstream said Bearer *** for ***");
    expect(line.url).toBe("postgresql://u:***@h/db");
  });

  it("no span, metric or log line holds an argument value or a secret value", async () => {
    await telemetry.flush();
    const metrics = (await scrape()).text;
    const haystacks = {
      spans: [...otlp.bodies, JSON.stringify(otlp.spans)].join("\n"),
      metrics,
      logs: logLines.join("\n"),
    };
    // The spans are really there to scan (the trace of the first test, in both encodings).
    expect(otlp.spans.length).toBeGreaterThan(10);
    for (const [where, text] of Object.entries(haystacks)) {
      for (const probe of [ARG_PROBE, SECRET_PROBE, Buffer.from(SECRET_PROBE).toString("base64")]) {
        expect(text.includes(probe), `${probe} in ${where}`).toBe(false);
      }
    }
  });
});
