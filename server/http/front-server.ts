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
import { serveOne } from "../mcp/node-adapter";
import type { ConnectionInfo } from "./ops";
import { type GuardVerdict, OPS_PATHS, type RequestGuard } from "./request-guard";

/** A fetch-style handler; the front server also tells it the connection's peer address. */
export type FetchHandler = (req: Request, connection?: ConnectionInfo) => Promise<Response>;

/** The headers next.config.mjs sets on every path. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
};

export const MCP_PATH = "/api/mcp";

export interface FrontServerOptions {
  guard: RequestGuard;
  /**
   * Handlers served directly, by exact path (no query). A getter may answer undefined (not ready
   * yet, e.g. the handler is created by its Next route on first use): the request then goes to Next.
   */
  routes: Record<string, () => FetchHandler | undefined>;
  /** Everything else: Next's request handler. */
  fallback: (req: http.IncomingMessage, res: http.ServerResponse) => unknown;
}

/** A guard verdict of proxy.ts, asked with only the headers it reads (no body, no signal). */
function guardVerdict(guard: RequestGuard, req: http.IncomingMessage, path: string) {
  const headers = new Headers();
  for (const name of ["host", "origin", "x-forwarded-host", "x-forwarded-proto"]) {
    const value = req.headers[name];
    if (typeof value === "string") headers.set(name, value);
  }
  try {
    return guard.check(new Request(`http://${req.headers.host ?? "localhost"}${path}`, { headers }));
  } catch {
    return { ok: false as const, reason: `host ${req.headers.host} is not a valid Host header` };
  }
}

export function createFrontServer(options: FrontServerOptions): http.Server {
  return http.createServer((req, res) => {
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    const path = query === -1 ? url : url.slice(0, query);
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
    void serveOne(handler, req, res, SECURITY_HEADERS);
  });
}
