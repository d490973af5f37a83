/**
 * The one place that decides whether an HTTP request may reach ToolStore by its Host and Origin:
 * the console (through proxy.ts), the tRPC mutations and the MCP route all ask it.
 * - Host must name this server (DNS rebinding: a foreign name that resolves to 127.0.0.1 gets 403).
 * - Origin, when present, is compared by scheme, host and port; userinfo and "null" are refused.
 * - X-Forwarded-Host/-Proto are read only when the deployment says a proxy sits in front; without
 *   it a forwarded scheme counts nowhere (not even through the scheme Next.js puts in req.url).
 * It reads no environment itself: `requestGuardFromEnv` builds it from server/env.ts.
 */

import { type Env, loadEnv, publicUrl } from "../env";
import { processSingleton } from "../infra/process-singletons";

/**
 * The operations endpoints, answered for a GET whatever Host names the server: load balancers and
 * scrapers address an instance by its IP, these change nothing, and /metrics checks its own access.
 */
export const OPS_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz", "/metrics"]);

export interface RequestGuardOptions {
  /** The configured listen address and port (HOST, PORT). */
  host?: string;
  port?: number;
  /** TOOLSTORE_PUBLIC_URL: its host (and port) is allowed and its origin too. */
  publicUrl?: string;
  /** Extra names, `name` (any port) or `name:port` (that port only). */
  allowedHosts?: string[];
  /** Extra origins (scheme://host[:port]) that may send requests, e.g. a browser-based MCP client. */
  allowedOrigins?: string[];
  /** Read X-Forwarded-Host and X-Forwarded-Proto (only behind a proxy that sets them). */
  trustProxy?: boolean;
}

export type GuardVerdict = { ok: true } | { ok: false; reason: string };

/**
 * What the guard reads of a request: its URL and four headers. A web Request is one; the front
 * server hands it a view of the Node request instead of building a Request for the check.
 */
export interface GuardedRequest {
  url: string;
  headers: { get(name: string): string | null };
}

export interface RequestGuard {
  /** Host (and, if trusted, forwarded host) is one of this server's names. */
  checkHost(req: GuardedRequest): GuardVerdict;
  /** A present Origin is this site's own or an allowed one; an absent Origin passes. */
  checkOrigin(req: GuardedRequest): GuardVerdict;
  /** Both checks, Host first. */
  check(req: GuardedRequest): GuardVerdict;
  /** The scheme://host[:port] this request was addressed to (forwarded values when trusted). */
  requestOrigin(req: GuardedRequest): string | null;
  /** Whether the request reached us over https (X-Forwarded-Proto only when trusted). */
  isHttps(req: GuardedRequest): boolean;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);
const WILDCARD_LISTEN = new Set(["0.0.0.0", "::", "[::]", ""]);

/** `name` or `name:port` -> lowercased hostname (IPv6 bracketed) and port ("" if none). */
function splitHost(value: string): { name: string; port: string } | null {
  try {
    const url = new URL(`http://${value.trim()}`);
    if (url.username || url.password || url.pathname !== "/" || url.search || url.hash) return null;
    // new URL drops :80 for http; keep what was written so `name:80` still means that port.
    const written = /:(\d+)$/.exec(value.trim())?.[1] ?? "";
    return { name: url.hostname.toLowerCase(), port: written };
  } catch {
    return null;
  }
}

function firstForwarded(value: string | null): string | null {
  const first = value?.split(",")[0]?.trim();
  return first ? first : null;
}

export function createRequestGuard(options: RequestGuardOptions = {}): RequestGuard {
  /** name -> allowed ports; an empty set means any port. */
  const names = new Map<string, Set<string> | "any">();
  const allow = (name: string, port: string) => {
    const current = names.get(name);
    if (current === "any") return;
    if (!port) {
      names.set(name, "any");
      return;
    }
    const ports = current ?? new Set<string>();
    ports.add(port);
    names.set(name, ports);
  };
  for (const name of LOOPBACK) allow(name, "");
  if (options.host && !WILDCARD_LISTEN.has(options.host)) {
    const listen =
      options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
    const parsed = splitHost(listen);
    if (parsed) allow(parsed.name, options.port ? String(options.port) : "");
  }
  const origins = new Set<string>();
  if (options.publicUrl) {
    const url = new URL(options.publicUrl);
    allow(url.hostname.toLowerCase(), url.port || (url.protocol === "https:" ? "443" : "80"));
    origins.add(url.origin);
  }
  for (const entry of options.allowedHosts ?? []) {
    const parsed = splitHost(entry);
    if (parsed) allow(parsed.name, parsed.port);
  }
  for (const entry of options.allowedOrigins ?? []) {
    try {
      origins.add(new URL(entry).origin);
    } catch {
      // server/env.ts validates the list; an unparsable entry allows nothing.
    }
  }

  const addressedHost = (req: GuardedRequest): string | null => {
    if (options.trustProxy) {
      const forwarded = firstForwarded(req.headers.get("x-forwarded-host"));
      if (forwarded) return forwarded;
    }
    return req.headers.get("host");
  };

  const isHttps = (req: GuardedRequest): boolean => {
    const proto = firstForwarded(req.headers.get("x-forwarded-proto"));
    if (options.trustProxy && proto) return proto.toLowerCase() === "https";
    // Next.js writes req.url's scheme from X-Forwarded-Proto whoever sent it (and sets the header
    // itself, "http", when the client did not: `next start` never terminates TLS). With the header
    // present and no trusted proxy, the URL's scheme is the client's claim, so it is plain http.
    if (proto) return false;
    return new URL(req.url).protocol === "https:";
  };

  const hostAllowed = (value: string, https: boolean): boolean => {
    const parsed = splitHost(value);
    if (!parsed) return false;
    const ports = names.get(parsed.name);
    if (!ports) return false;
    if (ports === "any") return true;
    return ports.has(parsed.port || (https ? "443" : "80"));
  };

  const requestOrigin = (req: GuardedRequest): string | null => {
    const host = addressedHost(req);
    if (!host) return null;
    try {
      return new URL(`${isHttps(req) ? "https" : "http"}://${host}`).origin;
    } catch {
      return null;
    }
  };

  const checkHost = (req: GuardedRequest): GuardVerdict => {
    const host = addressedHost(req);
    if (!host) return { ok: false, reason: "the request has no Host header" };
    if (!hostAllowed(host, isHttps(req))) {
      return {
        ok: false,
        reason: `host ${host} is not this server; add it to TOOLSTORE_ALLOWED_HOSTS or TOOLSTORE_PUBLIC_URL if it should be`,
      };
    }
    return { ok: true };
  };

  const checkOrigin = (req: GuardedRequest): GuardVerdict => {
    const origin = req.headers.get("origin");
    if (origin === null) return { ok: true };
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      return { ok: false, reason: `origin ${origin} is not a URL` };
    }
    if (parsed.username || parsed.password) {
      return { ok: false, reason: `origin ${origin} carries userinfo` };
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      return { ok: false, reason: `origin ${origin} is not http(s)` };
    }
    if (parsed.pathname !== "/" || parsed.search || parsed.hash) {
      return { ok: false, reason: `origin ${origin} is not a bare origin` };
    }
    if (parsed.origin === requestOrigin(req) || origins.has(parsed.origin)) return { ok: true };
    return { ok: false, reason: `origin ${origin} is not this site` };
  };

  return {
    checkHost,
    checkOrigin,
    check(req) {
      const host = checkHost(req);
      return host.ok ? checkOrigin(req) : host;
    },
    requestOrigin,
    isHttps,
  };
}

export function requestGuardFromEnv(env: Env = loadEnv()): RequestGuard {
  return createRequestGuard({
    host: env.HOST,
    port: env.PORT,
    publicUrl: publicUrl(env),
    allowedHosts: env.TOOLSTORE_ALLOWED_HOSTS,
    allowedOrigins: env.TOOLSTORE_ALLOWED_ORIGINS,
    trustProxy: env.TOOLSTORE_TRUST_PROXY,
  });
}

/** The process's guard, built once from the environment. */
export function getRequestGuard(): RequestGuard {
  return processSingleton("requestGuard", requestGuardFromEnv);
}

/** Set by proxy.ts on every request: the path and query asked for (sign-in returns there). */
export const REQUEST_PATH_HEADER = "x-toolstore-path";
