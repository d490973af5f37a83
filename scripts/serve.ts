/**
 * The serving process of `npm start` (started by scripts/start.ts once the database and the
 * build are ready): Next.js in this process behind the front server (server/http/front-server.ts),
 * which answers /api/mcp directly, hands /api/trpc WebSocket upgrades (the console's live views) to
 * the live socket, and passes everything else to Next. The MCP handler is the one
 * the bundled /api/mcp route creates (a process singleton), so there is one copy of the engine,
 * the database client and the event bus; the first /api/mcp request, sent here at start, goes
 * through Next and creates it.
 */
import http from "node:http";
import path from "node:path";
import next from "next";
import type { LiveSocket } from "../server/api/live-socket";
import { loadEnv } from "../server/env";
import {
  createFrontServer,
  type FetchHandler,
  LIVE_PATH,
  MCP_PATH,
  mcpAdmission,
} from "../server/http/front-server";
import type { OpsHandlers } from "../server/http/ops";
import { getRequestGuard } from "../server/http/request-guard";
import { startIdleGc } from "../server/infra/idle-gc";
import { peekProcessSingleton } from "../server/infra/process-singletons";

const root = path.resolve(import.meta.dirname, "..");
const METRICS_PATH = "/metrics";

/**
 * One request to this server, answered or given up after 30 s, never thrown. Plain node:http, not
 * fetch: once a route is loaded, Next has patched the global fetch, and its patched GET from
 * outside a request never settled here (`npm start` then never printed Ready or the setup link).
 */
function warm(host: string, port: number, route: string, method: string): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request({ host, port, path: route, method, timeout: 30_000 }, (res) => {
      res.resume();
      res.once("end", resolve);
      res.once("error", () => resolve());
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve());
    req.end();
  });
}

export async function serve(options: { host: string; port: number; dev?: boolean }): Promise<void> {
  const app = next({ dev: options.dev ?? false, dir: root, hostname: options.host, port: options.port });
  await app.prepare();
  const nextHandler = app.getRequestHandler();
  const server = createFrontServer({
    guard: getRequestGuard(),
    routes: {
      [MCP_PATH]: () => peekProcessSingleton<FetchHandler>("mcpHttpHandler"),
      // Served here, not by its Next route, so TOOLSTORE_METRICS=local sees the client's address.
      [METRICS_PATH]: () => {
        const ops = peekProcessSingleton<OpsHandlers>("opsHandlers");
        return ops && ((req, connection) => ops.metrics(req, connection));
      },
    },
    fallback: (req, res) => nextHandler(req, res),
    // The MCP handler reads its body with readBodyText.
    bodyAside: new Set([MCP_PATH]),
    ...mcpAdmission(loadEnv().TOOLSTORE_MCP_CONCURRENCY),
    // The console's live streams: one socket per tab, created by the bundled /api/trpc route.
    upgrades: {
      [LIVE_PATH]: () => peekProcessSingleton<LiveSocket>("liveSocket")?.upgrade,
    },
    upgradeFallback: app.getUpgradeHandler(),
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const shown = options.host.includes(":") ? `[${options.host}]` : options.host;
  // Loads the MCP route (and with it the handler) and the ops handlers now rather than on a
  // client's first request.
  for (const [route, method] of [
    [MCP_PATH, "POST"],
    ["/healthz", "GET"],
    [`${LIVE_PATH}/auth.me`, "GET"],
  ] as const) {
    await warm(options.host, options.port, route, method);
  }
  console.log(`▲ Ready on http://${shown}:${options.port}`);
  // A burst's garbage goes back once the process is quiet again (server/infra/idle-gc.ts).
  startIdleGc();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      peekProcessSingleton<LiveSocket>("liveSocket")?.close();
      server.close();
      server.closeAllConnections();
      process.exit(0);
    });
  }
}

const port = Number(process.argv[process.argv.indexOf("-p") + 1]);
const host = process.argv[process.argv.indexOf("-H") + 1] ?? "127.0.0.1";
await serve({ host, port, dev: process.argv.includes("--dev") });
