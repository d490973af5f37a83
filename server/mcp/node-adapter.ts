/**
 * Bridges node:http and fetch-style handlers: a Node request as a web `Request` (aborted when the
 * connection closes) and a web `Response` written back. The front server (server/http/front-server.ts)
 * uses it for /api/mcp; `serveFetchHandler` serves one handler on its own for tests and benchmarks.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { processSingleton } from "../infra/process-singletons";
import { readCapped } from "../services/oauth/clients";

/**
 * What `toFetchRequest` knows of each Request it made: what aborts when its client goes away, and
 * (`bodyAside`) the Node request whose body `readBodyText` reads. Held once per process: `npm
 * start` loads this module twice, once for the front server (scripts/serve.ts) and once inside
 * Next's bundle of the MCP handler, and a map of one copy is empty in the other.
 */
const requestsMade = processSingleton("nodeRequestsMade", () => ({
  disconnects: new WeakMap<Request, AbortSignal>(),
  bodies: new WeakMap<Request, http.IncomingMessage>(),
  slots: new WeakMap<Request, () => void>(),
}));

/**
 * Aborts when the client of `request` goes away before the answer: for a request from
 * `toFetchRequest`, its connection's close; for any other (Next's route), the request's own signal.
 */
export function clientGone(request: Request): AbortSignal {
  return requestsMade.disconnects.get(request) ?? request.signal;
}

/**
 * The Node request as a web Request; `clientGone(request)` aborts when the client goes away
 * before the answer. The signal is not the Request's own: undici ties a signal given to `new
 * Request` to a FinalizationRegistry, which young-generation collections do not clear, so every
 * request's signal, its listeners and what they hold lived until the next full collection (about
 * 10 KiB per MCP call moved to the old generation; bench/served.bench.ts).
 */
export function toFetchRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  options: BodyOptions = {},
): Request {
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
  const requestHeaders = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === "string") requestHeaders.set(k, v);
    else if (Array.isArray(v)) for (const item of v) requestHeaders.append(k, item);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const aside = hasBody && options.bodyAside === true;
  const controller = new AbortController();
  // As Next.js does: a close after the response was written is the normal end, not an abort (an
  // abort per request would run every abort listener and build a DOMException with its stack).
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  const request = new Request(url, {
    method: req.method ?? "GET",
    headers: requestHeaders,
    ...(hasBody && !aside ? { body: Readable.toWeb(req) as ReadableStream, duplex: "half" } : {}),
  } as RequestInit);
  requestsMade.disconnects.set(request, controller.signal);
  if (aside) requestsMade.bodies.set(request, req);
  if (options.release) requestsMade.slots.set(request, options.release);
  return request;
}

/**
 * The key under which the MCP handler puts a request's `yieldAdmission` into the `authInfo.extra`
 * it hands the SDK's transport, which passes it as is to the tool handlers (execute-direct.ts).
 */
export const YIELD_ADMISSION = "toolstore/yieldAdmission";

/**
 * The request has stopped computing (it waits for a human): its admission slot (server/http/
 * admission.ts) goes to the next request now rather than after its time. No-op for a request
 * that holds none.
 */
export function yieldAdmission(request: Request): void {
  const release = requestsMade.slots.get(request);
  if (!release) return;
  requestsMade.slots.delete(request);
  release();
}

export interface BodyOptions {
  /**
   * The Request gets no body; its handler reads the Node request's with `readBodyText`. For a
   * handler that reads nothing else: Readable.toWeb alone was 2.3% of the main thread's CPU in a
   * profile of the served bench (one calculator call an action), for bodies of a few hundred bytes.
   */
  bodyAside?: boolean;
  /** The request's admission slot, which `yieldAdmission(request)` gives back early. */
  release?: () => void;
}

/**
 * The body of `request` as text, or null when it is over `max` bytes (declared or sent); what is
 * left unread stays so (writeFetchResponse then closes the connection). Reads a body held aside
 * (`bodyAside`) from its Node request, any other from the Request's stream.
 */
export async function readBodyText(request: Request, max: number): Promise<string | null> {
  if (Number(request.headers.get("content-length") ?? "0") > max) return null;
  const node = requestsMade.bodies.get(request);
  if (node) return readNodeBody(node, max);
  return readCapped(request, max);
}

function readNodeBody(req: http.IncomingMessage, max: number): Promise<string | null> {
  if (req.readableEnded) return Promise.resolve("");
  // Made only when it happens: an Error captures a stack trace, and this runs for every MCP request.
  const gone = () => new Error("the client closed the request before its body ended");
  if (req.destroyed) return Promise.reject(gone());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (value: string | null, error?: Error) => {
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) chunks.push(chunk);
      else {
        // Not destroyed: the refusal still goes out on this connection, which then closes.
        req.pause();
        settle(null);
      }
    };
    const onEnd = () => settle(Buffer.concat(chunks).toString("utf8"));
    const onError = (error: Error) => settle(null, error);
    const onClose = () => settle(null, gone());
    req.on("data", onData).once("end", onEnd).once("error", onError).once("close", onClose);
  });
}

/** Writes `response` (status, headers, streamed body) to `res`, with `extraHeaders` added. */
export async function writeFetchResponse(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  response: Response,
  extraHeaders: Record<string, string> = {},
): Promise<void> {
  const headers: Record<string, string | string[]> = { ...extraHeaders };
  for (const [k, v] of response.headers) headers[k] = v;
  const setCookies = response.headers.getSetCookie();
  if (setCookies.length > 1) headers["set-cookie"] = setCookies;
  // A body the handler refused unread (e.g. too large) would poison a kept-alive connection.
  if (req.method !== "GET" && req.method !== "HEAD" && !req.readableEnded) headers.connection = "close";
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

/** Runs `handler` for one Node request; a handler that throws answers 500. */
export async function serveOne(
  handler: (req: Request, connection?: { remoteAddress?: string | undefined }) => Promise<Response>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  extraHeaders?: Record<string, string>,
  options?: BodyOptions,
): Promise<void> {
  try {
    const request = toFetchRequest(req, res, options);
    const response = await handler(request, { remoteAddress: req.socket.remoteAddress });
    await writeFetchResponse(req, res, response, extraHeaders);
  } catch (error) {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(error));
  }
}

export async function serveFetchHandler(
  handler: (req: Request) => Promise<Response>,
  /** The one path served (others get 404), or null for every path (the handler routes). */
  path: string | null = "/api/mcp",
  /** 0 (default): any free port. A fixed port lets a restarted process serve the same address. */
  port = 0,
): Promise<{ url: string; server: http.Server; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (path !== null && (req.url ?? "/").split("?")[0] !== path) {
      res.writeHead(404).end();
      return;
    }
    void serveOne(handler, req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}${path ?? ""}`,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
