/**
 * The console's live streams over one WebSocket per tab. Over HTTP/1.1 a browser opens at most
 * six connections to a host, shared by all its tabs, and every tRPC subscription over SSE held
 * one: two dashboard tabs (three streams each) left no connection for a click's request, which
 * then waited forever. Here every subscription of a tab shares one socket, which does not count
 * against that limit; the client falls back to SSE where the socket cannot open
 * (app/_lib/live-link.ts).
 *
 * The bundled /api/trpc route creates the handler (a process singleton, as the MCP handler is),
 * and the front server (server/http/front-server.ts) hands it the upgrades of /api/trpc after the
 * same Host/Origin check as every other request. Each procedure then runs as over HTTP: the
 * context is built from the upgrade request's headers (its session cookie, Host and Origin), and
 * the session is read again for every subscription, so one that was signed out stops working.
 */
import type { IncomingMessage } from "node:http";
import { applyWSSHandler } from "@trpc/server/adapters/ws";
import { WebSocketServer } from "ws";
import { getDb } from "../db";
import { getEngine } from "../engine";
import { LIVE_PATH, type UpgradeHandler } from "../http/front-server";
import { processSingleton } from "../infra/process-singletons";
import { SESSION_COOKIE, sessionUser } from "../services/auth";
import { readCookie } from "./cookies";
import { appRouter } from "./root";
import type { Context } from "./trpc";

/** The upgrade request as the fetch Request the procedures' context carries (headers only). */
function requestOf(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(", "));
  }
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? LIVE_PATH}`, { headers });
}

export async function liveSocketContext(req: IncomingMessage): Promise<Context> {
  const db = getDb();
  const request = requestOf(req);
  const token = readCookie(request.headers.get("cookie"), SESSION_COOKIE);
  return {
    db,
    user: await sessionUser(db, token),
    sessionToken: token,
    req: request,
    resHeaders: new Headers(),
    engine: getEngine,
    live: true,
  };
}

export interface LiveSocket {
  upgrade: UpgradeHandler;
  /** Asks every connected tab to reconnect (to another instance, or to this one once restarted). */
  close(): void;
}

export function createLiveSocket(): LiveSocket {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  const handler = applyWSSHandler({
    wss,
    router: appRouter,
    createContext: ({ req }) => liveSocketContext(req),
    // A proxy or NAT that drops idle connections is noticed within a minute.
    keepAlive: { enabled: true, pingMs: 30_000, pongWaitMs: 10_000 },
  });
  return {
    upgrade: (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req)),
    close() {
      handler.broadcastReconnectNotification();
      wss.close();
    },
  };
}

/** The process's live socket (the /api/trpc route module creates it when it loads). */
export function mountLiveSocket() {
  return processSingleton("liveSocket", createLiveSocket);
}
