/**
 * The process's HTTP front: one node:http server that answers /api/mcp by handing the request
 * straight to the MCP handler (no Next.js router, proxy or route module on the hot path) and
 * passes every other request to Next's request handler, where proxy.ts and the App Router run as
 * before. What proxy.ts and next.config.mjs guarantee for every response holds on the direct path
 * too: the Host/Origin guard (server/http/request-guard.ts) answers 403 before any handler runs,
 * and the same security headers are set.
 * Further framework-free handlers (health, readiness, metrics) can be mounted by exact path in
 * `routes`; a path not listed there goes to Next.
 */
import http from "node:http";
import { availableParallelism } from "node:os";
import type { Duplex } from "node:stream";
import { serveOne } from "../mcp/node-adapter";
import { type Admission, createAdmission } from "./admission";
import type { ConnectionInfo } from "./ops";
import { type GuardedRequest, type GuardVerdict, OPS_PATHS, type RequestGuard } from "./request-guard";

/** A fetch-style handler; the front server also tells it the connection's peer address. */
export type FetchHandler = (req: Request, connection?: ConnectionInfo) => Promise<Response>;

/** The headers next.config.mjs sets on every path. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
};

export const MCP_PATH = "/api/mcp";
/** The console's live socket (server/api/live-socket.ts): WebSocket upgrades of the tRPC path. */
export const LIVE_PATH = "/api/trpc";

/**
 * An MCP request that has run this long stops counting against the limit: by then it waits (for an
 * upstream server, a long action), and one whose action waits for a human gives its slot back at
 * once (execute-direct.ts). Under 200 clients, admitted 8 at a time, a request took 10-30 ms; at
 * 100 ms, slow ones already slipped past the limit (`GET /signin` p99 219 and 254 ms, against 170
 * and 184 ms at 250 ms).
 */
const MCP_RELEASE_AFTER_MS = 250;

/**
 * The admission of MCP POSTs (TOOLSTORE_MCP_CONCURRENCY; by default 4 per CPU, at least 8; 0: none).
 * Under 200 MCP clients for 60 s on 2 cores, 8 at a time took `GET /signin` from p50 101 ms / p99
 * 290 ms to 56 / 184 ms at the same throughput (179 against 175 actions/s); 4 at a time gave
 * 39 / 139 ms but 146 actions/s, 24 at a time 94 / 271 ms (served bench, `clients` section).
 */
export function mcpAdmission(limit: number | undefined): Pick<FrontServerOptions, "admission"> {
  const n = limit ?? Math.max(8, 4 * availableParallelism());
  if (n <= 0) return {};
  return {
    admission: {
      paths: new Set([MCP_PATH]),
      admission: createAdmission({ limit: n, releaseAfterMs: MCP_RELEASE_AFTER_MS }),
    },
  };
}

export interface FrontServerOptions {
  guard: RequestGuard;
  /**
   * Handlers served directly, by exact path (no query). A getter may answer undefined (not ready
   * yet, e.g. the handler is created by its Next route on first use): the request then goes to Next.
   */
  routes: Record<string, () => FetchHandler | undefined>;
  /** Everything else: Next's request handler. */
  fallback: (req: http.IncomingMessage, res: http.ServerResponse) => unknown;
  /**
   * WebSocket upgrades served directly, by exact path, after the Host/Origin guard (a page of
   * another site cannot open them with the user's cookie). A getter that answers undefined, or a
   * path not listed, goes to `upgradeFallback` (Next's, for its dev server), else is refused.
   */
  upgrades?: Record<string, () => UpgradeHandler | undefined>;
  upgradeFallback?: UpgradeHandler;
  /**
   * Routes whose handler reads its request body with readBodyText (server/mcp/node-adapter.ts):
   * their Request carries no body of its own, so no web stream is made for it.
   */
  bodyAside?: ReadonlySet<string>;
  /**
   * POSTs to these paths run a few at a time (server/http/admission.ts), the rest wait their turn
   * per client (its Authorization header, else its address).
   */
  admission?: { paths: ReadonlySet<string>; admission: Admission };
}

export type UpgradeHandler = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void;

function refuseUpgrade(socket: Duplex, status: string, reason: string) {
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n\r\n${reason}\n`,
  );
}

/** A guard verdict of proxy.ts, asked with only the headers it reads (no body, no signal). */
function guardVerdict(guard: RequestGuard, req: http.IncomingMessage, path: string) {
  // Node lowercases header names and joins repeated ones (Host keeps the first).
  const view: GuardedRequest = {
    url: `http://${req.headers.host ?? "localhost"}${path}`,
    headers: {
      get(name) {
        const value = req.headers[name];
        return typeof value === "string" ? value : null;
      },
    },
  };
  try {
    return guard.check(view);
  } catch {
    return { ok: false as const, reason: `host ${req.headers.host} is not a valid Host header` };
  }
}

const pathOf = (url = "/") => {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
};

export function createFrontServer(options: FrontServerOptions): http.Server {
  const server = http.createServer((req, res) => {
    const path = pathOf(req.url);
    const handler = Object.hasOwn(options.routes, path) ? options.routes[path]?.() : undefined;
    if (!handler) {
      void Promise.resolve(options.fallback(req, res)).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(error));
      });
      return;
    }
    // proxy.ts's exception: the operations endpoints answer a GET whatever Host they are sent.
    const verdict: GuardVerdict =
      req.method === "GET" && OPS_PATHS.has(path) ? { ok: true } : guardVerdict(options.guard, req, path);
    if (!verdict.ok) {
      res
        .writeHead(403, { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8" })
        .end(`Forbidden: ${verdict.reason}.\n`);
      return;
    }
    const bodyAside = options.bodyAside?.has(path) === true;
    const serve = (release?: () => void) => {
      const served = serveOne(handler, req, res, SECURITY_HEADERS, { bodyAside, release });
      if (release) void served.finally(release);
    };
    const admission = options.admission;
    if (!admission || req.method !== "POST" || !admission.paths.has(path)) {
      serve();
      return;
    }
    const release = admission.admission.tryEnter();
    if (release) {
      serve(release);
      return;
    }
    const client = req.headers.authorization ?? req.socket.remoteAddress ?? "";
    res.once("close", admission.admission.wait(client, serve));
  });
  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = pathOf(req.url);
    const upgrades = options.upgrades ?? {};
    const handler = Object.hasOwn(upgrades, path) ? upgrades[path]?.() : undefined;
    if (!handler) {
      if (options.upgradeFallback) options.upgradeFallback(req, socket, head);
      else refuseUpgrade(socket, "404 Not Found", `No WebSocket is served at ${path}.`);
      return;
    }
    const verdict = guardVerdict(options.guard, req, path);
    if (!verdict.ok) {
      refuseUpgrade(socket, "403 Forbidden", `Forbidden: ${verdict.reason}.`);
      return;
    }
    handler(req, socket, head);
  });
  return server;
}
