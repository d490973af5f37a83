/**
 * The Streamable HTTP side of the MCP mount: Host and Origin check (server/http/request-guard.ts), API key on every request, body size
 * and per-key rate limits, and sessions that live in the database so that any instance can serve
 * a session's next request (an instance builds a server and transport for a session when it first
 * sees it, and its later POSTs share them). Answers that a client gives to an approval elicitation
 * are routed here by approval id, on whichever instance they land, and so is
 * notifications/cancelled (by the session and request id the run recorded): the call it cancels
 * may be running on another instance.
 */
import { randomUUID } from "node:crypto";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  type ClientCapabilities,
  isInitializeRequest,
  isJSONRPCRequest,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import type { Db } from "../db";
import { createRequestGuard, type RequestGuard } from "../http/request-guard";
import { type ApiKeyIdentity, verifyApiKey } from "../services/api-keys";
import { type OAuthSite, oauthSite } from "../services/oauth/site";
import { ACCESS_PREFIX, verifyAccessToken } from "../services/oauth/tokens";
import { createTtlCache } from "../services/ttl-cache";
import { ELICIT_ANSWERS, ELICIT_META_KEY } from "./approval-prompts";
import type { McpBackend } from "./mcp-backend";
import { traceMcpRequests } from "./mcp-trace";
import { clientGone, readBodyText, YIELD_ADMISSION, yieldAdmission } from "./node-adapter";
import {
  abortRequestHandler,
  checkSdkCompat,
  endStreamWhenCancelled,
  restoreClientInfo,
  resumeTransportSession,
} from "./sdk-compat";
import { createMcpServer } from "./server";

const MAX_BODY_BYTES = 1024 * 1024;
const ELICIT_ID_PREFIX = "toolstore-elicit:";
const SEEN_EVERY_MS = 60_000;
/** A session row read on this instance is reused this long (a close here drops it at once). */
const SESSION_CACHE_MS = 1_000;

export interface McpHttpOptions {
  db: Db;
  backend: McpBackend;
  /** Where people create keys, for the 401 message. */
  consoleUrl: string;
  /** Origins besides the request's own host that may call (browser-based MCP clients). */
  allowedOrigins: string[];
  /** Host and Origin policy; by default loopback names and `allowedOrigins` only. */
  guard?: RequestGuard;
  rateLimitPerMinute: number;
  maxBodyBytes?: number;
  /**
   * The OAuth site a request was addressed to (its resource is the audience access tokens must
   * name, its metadata URL goes into the 401); by default the request URL's own origin.
   */
  siteOf?: (req: Request) => OAuthSite;
  /**
   * A session's server and transport on this instance go once unused this long (default 5 s;
   * looked for every half of it); its next request builds them again from the session's row.
   */
  sessionServerIdleMs?: number;
}

export interface McpHttpHandler {
  (req: Request): Promise<Response>;
  /** Sessions whose server and transport this instance keeps now (for tests and metrics). */
  sessionServersHeld(): number;
}

export function createMcpHttpHandler(options: McpHttpOptions): McpHttpHandler {
  checkSdkCompat();
  const limiter = createRateLimiter(options.rateLimitPerMinute);
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const guard = options.guard ?? createRequestGuard({ allowedOrigins: options.allowedOrigins });
  const siteOf = options.siteOf ?? ((req: Request) => oauthSite(new URL(req.url).origin));
  // A client sends several requests per call, and each used to read its session row.
  const sessionRows = createTtlCache<Awaited<ReturnType<typeof readSession>>>(SESSION_CACHE_MS);
  const readSession = (id: string) => options.db.mcpSession.findUnique({ where: { id } });
  const sessionServers = createSessionServers(
    options.backend,
    (identity, session) => openServer(identity, session),
    options.sessionServerIdleMs ?? SESSION_SERVER_IDLE_MS,
  );

  async function openServer(
    identity: ApiKeyIdentity,
    session: ResumedSession | null,
    parsedBody?: unknown,
  ): Promise<ServedSession> {
    const init = isInitializeRequest(parsedBody) ? parsedBody.params : undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: async (id) => {
        await options.db.mcpSession.create({
          data: {
            id,
            apiKeyId: identity.id,
            capabilities: JSON.stringify(init?.capabilities ?? {}),
            clientName: init?.clientInfo.name.slice(0, 100) ?? "",
            clientVersion: init?.clientInfo.version.slice(0, 50) ?? "",
          },
        });
      },
      onsessionclosed: async (id) => {
        sessionRows.forget(id);
        sessionServers.forget(id);
        await options.db.mcpSession.updateMany({
          where: { id, closedAt: null },
          data: { closedAt: new Date() },
        });
      },
    });
    if (session) resumeTransportSession(transport, session.id);
    rewriteElicitationIds(transport);

    const server = await createMcpServer({
      identity,
      sessionId: session?.id ?? "",
      backend: options.backend,
    });
    if (session) {
      restoreClientInfo(server, session.capabilities, {
        name: session.clientName,
        version: session.clientVersion,
      });
    }
    await server.connect(transport);
    return { server, transport };
  }

  async function handleMcp(req: Request): Promise<Response> {
    const verdict = guard.check(req);
    if (!verdict.ok) return jsonError(403, -32000, `Forbidden: ${verdict.reason}.`);

    const identity = await authenticate(options.db, siteOf(req), bearer(req), options.consoleUrl);
    if (identity instanceof Response) return identity;

    const retryAfter = limiter.take(identity.id);
    if (retryAfter > 0) {
      return jsonError(
        429,
        -32000,
        `Too many requests for key "${identity.name}"; retry in ${retryAfter}s.`,
        {
          "Retry-After": String(retryAfter),
        },
      );
    }

    let parsedBody: unknown;
    if (req.method === "POST") {
      const text = await readBodyText(req, maxBody);
      if (text === null) {
        return jsonError(
          413,
          -32000,
          `Request body exceeds ${Math.round(maxBody / 1024)} KiB; send less code at once.`,
        );
      }
      try {
        parsedBody = JSON.parse(text);
      } catch {
        return jsonError(400, -32700, "Parse error: the body is not JSON.");
      }
      const routed = await routeElicitationAnswers(parsedBody, identity, options.backend);
      if (routed) return new Response(null, { status: 202 });
    }

    const sessionHeader = req.headers.get("mcp-session-id");
    const traced = traceMcpRequests(req, parsedBody, sessionHeader);
    const authInfo = requestAuthInfo(identity, req);
    const handle = (t: Transport) => traced.handle(t, () => t.handleRequest(req, { parsedBody, authInfo }));
    await routeCancellations(parsedBody, identity, sessionHeader ?? "", options.backend);
    let session: ResumedSession | null = null;
    if (sessionHeader) {
      const row = await sessionRows.get(sessionHeader, () => readSession(sessionHeader));
      if (!row || row.closedAt || row.apiKeyId !== identity.id) {
        sessionServers.forget(sessionHeader);
        return jsonError(404, -32001, "Session not found: initialize a new MCP session.");
      }
      session = {
        id: row.id,
        capabilities: JSON.parse(row.capabilities) as ClientCapabilities,
        clientName: row.clientName,
        clientVersion: row.clientVersion,
      };
      if (Date.now() - row.lastSeenAt.getTime() > SEEN_EVERY_MS) {
        await options.db.mcpSession.update({ where: { id: row.id }, data: { lastSeenAt: new Date() } });
        sessionRows.forget(row.id);
      }
    }

    // A session's POSTs share one server and transport on this instance (a parked call then costs
    // its request, not a whole server). The first request of a session, and a GET stream, get
    // their own, as does a request whose key or mounted modules changed since the server was built.
    const gone = clientGone(req);
    if (session && req.method === "POST") {
      const served = await sessionServers.open(identity, session);
      const ids = requestIds(parsedBody);
      // A client that goes away cancels its calls: their handlers are aborted as by a
      // notifications/cancelled, which cancels the runs, and their pending approvals expire.
      const abort = () => {
        for (const id of ids) abortRequestHandler(served.server, id, "the client disconnected");
      };
      gone.addEventListener("abort", abort, { once: true });
      const response = await handle(served.transport);
      endStreamWhenCancelled(served.server, served.transport, ids);
      if (gone.aborted) abort();
      return response;
    }
    const opened = await openServer(identity, session, parsedBody);
    // Closing this request's own transport aborts its handlers, as above.
    gone.addEventListener("abort", () => void opened.transport.close().catch(() => {}), { once: true });
    const response = await handle(opened.transport);
    endStreamWhenCancelled(opened.server, opened.transport, requestIds(parsedBody));
    return response;
  }
  return Object.assign(handleMcp, { sessionServersHeld: () => sessionServers.size() });
}

/**
 * What the SDK hands the tool handlers of this request as `authInfo`: the key's identity and, for
 * execute_code, the way to give the request's admission slot back once its action waits for a
 * human (server/http/admission.ts).
 */
function requestAuthInfo(identity: ApiKeyIdentity, req: Request) {
  return {
    token: "",
    clientId: identity.id,
    scopes: [],
    extra: { [YIELD_ADMISSION]: () => yieldAdmission(req) },
  };
}

/**
 * The identity behind the request's bearer: an API key, or an OAuth access token issued for this
 * resource (audience). Anything else is a 401 whose WWW-Authenticate names the resource metadata,
 * so an OAuth client can discover where to sign in (RFC 9728).
 */
async function authenticate(
  db: Db,
  site: OAuthSite,
  presented: string | null,
  consoleUrl: string,
): Promise<ApiKeyIdentity | Response> {
  let refusal = "";
  if (presented?.startsWith(ACCESS_PREFIX)) {
    const check = await verifyAccessToken(db, site.resource, presented);
    if (check.ok) return check.identity;
    refusal = `${check.reason}. `;
  } else {
    const identity = await verifyApiKey(db, presented);
    if (identity) return identity;
  }
  const description = `${refusal}Sign in with OAuth (this server's metadata: ${site.resourceMetadataUrl}) or send Authorization: Bearer <api key>. Create a key in the console at ${consoleUrl}/keys or with: npm run toolstore -- keys create --name <name>`;
  const challenge = [
    `Bearer realm="toolstore"`,
    `resource_metadata="${site.resourceMetadataUrl}"`,
    `scope="mcp"`,
    ...(presented ? [`error="invalid_token"`, `error_description="${description.replace(/"/g, "'")}"`] : []),
  ];
  return jsonError(
    401,
    -32001,
    `Unauthorized: a valid ToolStore API key or OAuth access token is required. ${description}`,
    { "WWW-Authenticate": challenge.join(", ") },
  );
}

interface ResumedSession {
  id: string;
  capabilities: ClientCapabilities;
  clientName: string;
  clientVersion: string;
}

type Transport = WebStandardStreamableHTTPServerTransport;

interface ServedSession {
  server: McpServer;
  transport: Transport;
}

/**
 * Sessions kept warm on one instance: at most this many, each at most this long unused. A kept
 * session costs up to about 100 KiB of heap (100 sessions, client and server in one process, added
 * 10.6 MiB after a forced collection), and used to be kept until a new session came along; the
 * next request of a session that went rebuilds its server, which did not show in that request's
 * time (`return 1` p50 9.66 ms with a kept server, 9.69 ms rebuilt each call, 80 calls each).
 * Unused for 5 s, one goes (swept 5-7.5 s after its last request): before the serving process's
 * collection once it is quiet (10 s, server/infra/idle-gc.ts), so that collection frees it. At
 * 30 s, after 200 MCP clients for a minute, RSS fell by another 26-37 MiB 35-45 s after the load,
 * when their sessions went.
 */
const SESSION_SERVERS_MAX = 1_000;
const SESSION_SERVER_IDLE_MS = 5_000;

/**
 * One server and transport per MCP session on this instance, rebuilt when what it was built from
 * (the key's identity, the description of its mounted modules) has changed. Dropping one never
 * ends a request: a request in flight holds its server until it answers.
 */
function createSessionServers(
  backend: McpBackend,
  open: (identity: ApiKeyIdentity, session: ResumedSession) => Promise<ServedSession>,
  idleMs: number,
) {
  /** In the order of last use, oldest first. */
  const entries = new Map<string, { stamp: string[]; usedAt: number; served: Promise<ServedSession> }>();
  // Sessions whose clients went away without closing them go even when no new session comes.
  let sweep: ReturnType<typeof setTimeout> | undefined;
  const sweepLater = () => {
    if (sweep) return;
    sweep = setTimeout(() => {
      sweep = undefined;
      const due = Date.now() - idleMs;
      for (const [id, entry] of entries) {
        if (entry.usedAt > due) break;
        entries.delete(id);
      }
      if (entries.size > 0) sweepLater();
    }, idleMs / 2);
    sweep.unref?.();
  };
  return {
    size: () => entries.size,
    async open(identity: ApiKeyIdentity, session: ResumedSession): Promise<ServedSession> {
      const { toolDescription, capabilities } = await backend.describe(identity);
      // Compared part by part: the description alone is a few KiB, not worth joining per request.
      const stamp = [JSON.stringify(identity), toolDescription, capabilitiesStamp(capabilities)];
      const now = Date.now();
      const hit = entries.get(session.id);
      entries.delete(session.id);
      if (hit?.stamp.every((part, i) => part === stamp[i])) {
        hit.usedAt = now;
        entries.set(session.id, hit);
        return hit.served;
      }
      for (const [id, entry] of entries) {
        if (entries.size < SESSION_SERVERS_MAX && now - entry.usedAt < idleMs) break;
        entries.delete(id);
      }
      const entry = { stamp, usedAt: now, served: open(identity, session) };
      entries.set(session.id, entry);
      sweepLater();
      entry.served.catch(() => {
        if (entries.get(session.id) === entry) entries.delete(session.id);
      });
      return entry.served;
    },
    forget(id: string) {
      entries.delete(id);
    },
  };
}

/** The capabilities document as text, once per value the backend's description cache hands out. */
const capabilityStamps = new WeakMap<object, string>();
function capabilitiesStamp(capabilities: unknown): string {
  if (!capabilities || typeof capabilities !== "object") return JSON.stringify(capabilities ?? null);
  let stamp = capabilityStamps.get(capabilities);
  if (stamp === undefined) {
    stamp = JSON.stringify(capabilities);
    capabilityStamps.set(capabilities, stamp);
  }
  return stamp;
}

/** The JSON-RPC request ids in a POST body (notifications and responses have none to cancel). */
function requestIds(body: unknown): (string | number)[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.filter(isJSONRPCRequest).map((m) => m.id);
}

/**
 * Give elicitation requests an id that names the approval, so the client's answer can be routed
 * by any instance, not only by the in-memory request table of the process that asked.
 */
function rewriteElicitationIds(transport: WebStandardStreamableHTTPServerTransport) {
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage, opts) => {
    if (isJSONRPCRequest(message) && message.method === "elicitation/create") {
      const approvalId = (message.params?._meta as Record<string, unknown> | undefined)?.[ELICIT_META_KEY];
      if (typeof approvalId === "string") {
        return send({ ...message, id: `${ELICIT_ID_PREFIX}${approvalId}:${message.id}` }, opts);
      }
    }
    return send(message, opts);
  };
}

async function routeElicitationAnswers(
  body: unknown,
  identity: ApiKeyIdentity,
  backend: McpBackend,
): Promise<boolean> {
  const messages = Array.isArray(body) ? body : [body];
  const answers = messages.filter(
    (m): m is { id: string; result?: { action?: string; content?: { decision?: string } } } =>
      !!m &&
      typeof m === "object" &&
      typeof (m as { id?: unknown }).id === "string" &&
      (m as { id: string }).id.startsWith(ELICIT_ID_PREFIX) &&
      !("method" in (m as object)),
  );
  if (answers.length === 0 || answers.length !== messages.length) return false;
  for (const message of answers) {
    const approvalId = message.id.slice(ELICIT_ID_PREFIX.length).split(":")[0] ?? "";
    const decision =
      message.result?.action === "accept"
        ? ELICIT_ANSWERS[message.result.content?.decision ?? ""]
        : undefined;
    // Declined or cancelled prompts leave the request to the console's queue.
    if (decision) await backend.answerFromClient(identity, approvalId, decision).catch(() => {});
  }
  return true;
}

/** notifications/cancelled cancels the run its request started, wherever that run runs. */
async function routeCancellations(
  body: unknown,
  identity: ApiKeyIdentity,
  mcpSessionId: string,
  backend: McpBackend,
): Promise<void> {
  const messages = Array.isArray(body) ? body : [body];
  for (const m of messages) {
    if (!m || typeof m !== "object" || (m as { method?: unknown }).method !== "notifications/cancelled")
      continue;
    const requestId = (m as { params?: { requestId?: unknown } }).params?.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") continue;
    // A cancel for a request that already ended (or never started a run) is a no-op, as the spec says.
    await backend.cancelRequest(identity, mcpSessionId, String(requestId)).catch(() => false);
  }
}

function bearer(req: Request): string | null {
  const header = req.headers.get("authorization");
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  return match?.[1] ?? null;
}

function jsonError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** A fixed one-minute window per key, per instance. */
function createRateLimiter(perMinute: number, now: () => number = Date.now) {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    /** 0 when allowed, else the seconds to wait. */
    take(key: string): number {
      const t = now();
      let w = windows.get(key);
      if (!w || t - w.start >= 60_000) {
        w = { start: t, count: 0 };
        windows.set(key, w);
        if (windows.size > 10_000) windows.clear();
      }
      w.count += 1;
      return w.count > perMinute ? Math.ceil((w.start + 60_000 - t) / 1000) : 0;
    },
  };
}
