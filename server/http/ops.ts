/**
 * The operations endpoints as plain `(Request) => Response` handlers, mounted by Next route files
 * (app/healthz, app/readyz, app/metrics) and callable by any other front server:
 * - `/healthz`: the process answers (no database, no engine);
 * - `/readyz`: the database answers and can take writes, every migration is applied, the sandbox
 *   pool has started (the first probe starts it); 503 with the failing checks otherwise;
 * - `/metrics`: Prometheus text, by TOOLSTORE_METRICS: `local` (loopback clients only), `off`
 *   (404), or a bearer token.
 * None of them needs a session; none reveals more than its checks' names and messages.
 */
import { timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { SandboxPool } from "../core/sandbox/pool";
import { dbTarget, getDb } from "../db";
import { getEngine } from "../engine";
import { type Env, loadEnv } from "../env";
import { createDbProbe, type ProbeResult } from "../infra/db-probe";
import { getMetrics, type Metrics } from "../infra/metrics";
import { processSingleton } from "../infra/process-singletons";
import { processTelemetry } from "../infra/telemetry-setup";

export type MetricsAccess = Env["TOOLSTORE_METRICS"];

export interface OpsOptions {
  probe: Pick<ReturnType<typeof createDbProbe>, "database" | "migrations">;
  /** The engine's sandbox pool once started; called by the first readiness probe. */
  pool: () => Promise<SandboxPool>;
  metrics: Metrics;
  access: MetricsAccess;
  /** HOST: when it is a loopback address every client is local. */
  listenHost: string;
  /** TOOLSTORE_TRUST_PROXY: the proxy's X-Forwarded-For names the client. */
  trustProxy: boolean;
}

/** What the front server knows of the connection (node:http's socket), when it knows it. */
export interface ConnectionInfo {
  remoteAddress?: string | undefined;
}

export interface OpsHandlers {
  healthz(req: Request): Response;
  readyz(req: Request): Promise<Response>;
  metrics(req: Request, connection?: ConnectionInfo): Promise<Response>;
}

const NO_STORE = { "cache-control": "no-store" };
const json = (status: number, body: unknown) =>
  new Response(`${JSON.stringify(body)}\n`, {
    status,
    headers: { "content-type": "application/json", ...NO_STORE },
  });
const text = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(`${body}\n`, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", ...NO_STORE, ...headers },
  });

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const bare = address.replace(/^\[|\]$/g, "").replace(/^::ffff:/i, "");
  if (bare === "localhost" || bare === "::1") return true;
  return isIP(bare) === 4 && bare.startsWith("127.");
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether `req` may read /metrics; a refusal says why and how to get access. */
function metricsRefusal(options: OpsOptions, req: Request, connection?: ConnectionInfo): Response | null {
  const { access } = options;
  if (access.access === "off") return text(404, "Not found: metrics are off (TOOLSTORE_METRICS=off).");
  if (access.access === "token") {
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.get("authorization") ?? "");
    if (match?.[1] && sameToken(match[1], access.token)) return null;
    return text(401, "Unauthorized: send Authorization: Bearer <the TOOLSTORE_METRICS token>.", {
      "www-authenticate": 'Bearer realm="toolstore-metrics"',
    });
  }
  // local: the connection's own address when the front server gives it; behind a trusted proxy
  // the address it saw; otherwise only a server that listens on loopback knows all its clients are.
  let client = connection?.remoteAddress;
  if (!client && options.trustProxy) {
    client = req.headers.get("x-forwarded-for")?.split(",").at(-1)?.trim();
  }
  if (client ? isLoopback(client) : isLoopback(options.listenHost)) return null;
  return text(
    403,
    "Forbidden: /metrics answers loopback clients only (TOOLSTORE_METRICS=local); scrape it from this host, or set TOOLSTORE_METRICS to a token of 16+ characters and send it as a bearer token.",
  );
}

export function createOpsHandlers(options: OpsOptions): OpsHandlers {
  let poolStarting: Promise<SandboxPool> | undefined;
  let poolError: string | undefined;

  async function sandbox(): Promise<ProbeResult> {
    if (!poolStarting) {
      poolError = undefined;
      poolStarting = options.pool().then(async (pool) => {
        await pool.warm();
        return pool;
      });
      poolStarting.catch((error: unknown) => {
        poolError = error instanceof Error ? error.message : String(error);
        poolStarting = undefined;
      });
    }
    const settled = await Promise.race([
      poolStarting.then((pool) => pool),
      new Promise<undefined>((r) => setTimeout(r, 1_000, undefined)),
    ]).catch(() => undefined);
    if (!settled) return { ok: false, message: poolError ?? "the sandbox pool is starting" };
    const { workers } = settled.stats();
    return workers > 0 ? { ok: true } : { ok: false, message: "the sandbox pool has no live worker" };
  }

  return {
    healthz: () => json(200, { status: "ok" }),
    async readyz() {
      const [database, migrations, pool] = await Promise.all([
        options.probe.database(),
        options.probe.migrations(),
        sandbox(),
      ]);
      const checks = { database, migrations, sandbox: pool };
      const ok = Object.values(checks).every((c) => c.ok);
      return json(ok ? 200 : 503, { status: ok ? "ready" : "not ready", checks });
    },
    async metrics(req, connection) {
      const refused = metricsRefusal(options, req, connection);
      if (refused) return refused;
      return new Response(await options.metrics.render(), {
        headers: { "content-type": options.metrics.contentType, ...NO_STORE },
      });
    },
  };
}

/** The process's handlers, from server/env.ts. */
export function getOpsHandlers(): OpsHandlers {
  return processSingleton("opsHandlers", () => {
    const env = loadEnv();
    processTelemetry(env);
    return createOpsHandlers({
      probe: createDbProbe(getDb(), dbTarget()),
      pool: async () => (await getEngine()).pool,
      metrics: getMetrics(),
      access: env.TOOLSTORE_METRICS,
      listenHost: env.HOST,
      trustProxy: env.TOOLSTORE_TRUST_PROXY,
    });
  });
}
