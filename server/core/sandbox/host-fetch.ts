/**
 * Outbound HTTP for guests (toolset bindings' `fetch`, the `http.fetch` built-in): a host
 * allowlist checked on the first URL and on every redirect hop, a timeout, and a response body
 * cap. Bodies are text; binary responses are not supported.
 */
import { AppError } from "../errors";

export interface HostFetchRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

export interface HostFetchResponse {
  status: number;
  statusText: string;
  /** Final URL after redirects. */
  url: string;
  headers: Record<string, string>;
  body: string;
}

export type HostFetch = (request: HostFetchRequest, signal?: AbortSignal) => Promise<HostFetchResponse>;

/**
 * `allowedHosts` entries: `api.example.com`, `api.example.com:8443`, `*.example.com` (any
 * subdomain, not the apex), or `*` (any host). Host names compare case-insensitively; without
 * a port an entry matches any port.
 */
export function isHostAllowed(url: string, allowedHosts: readonly string[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return false;
  const host = parsed.hostname.toLowerCase();
  const port = parsed.port;
  return allowedHosts.some((raw) => {
    const entry = raw.trim().toLowerCase();
    if (entry === "*") return true;
    const [name = "", entryPort] = entry.split(":");
    if (entryPort !== undefined && entryPort !== port) return false;
    if (name.startsWith("*.")) return host.endsWith(name.slice(1)) && host.length > name.length - 1;
    return host === name;
  });
}

export interface AllowlistFetchOptions {
  allowedHosts: readonly string[];
  timeoutMs: number;
  maxBodyBytes: number;
  maxRedirects?: number;
  /**
   * Called for every hop with the request as the caller wrote it (its URL set to the hop's) and
   * the first URL; returns what is actually sent (its URL too). Egress fills secrets here (see egress.ts).
   */
  prepareHop?: (request: HostFetchRequest, firstUrl: string) => HostFetchRequest;
  /**
   * Where a host is really sent (`api.example.com` or `api.example.com:8443` -> an origin such as
   * `http://127.0.0.1:4100`): a mirror, a staging server or a local stand-in. The allow-list and
   * secrets apply to the host as the code wrote it; only the connection goes elsewhere.
   */
  hostAliases?: Readonly<Record<string, string>>;
}

/** The URL actually fetched for `url`: its origin replaced by an alias of its host, if any. */
export function aliasedUrl(url: string, aliases: Readonly<Record<string, string>> | undefined): string {
  if (!aliases) return url;
  const parsed = new URL(url);
  const target = aliases[parsed.host.toLowerCase()] ?? aliases[parsed.hostname.toLowerCase()];
  if (!target) return url;
  const origin = new URL(target);
  parsed.protocol = origin.protocol;
  parsed.host = origin.host;
  return parsed.toString();
}

/**
 * Parses `TOOLSTORE_EGRESS_ALIASES`: `host=origin` pairs separated by commas, e.g.
 * `api.openweathermap.org=http://127.0.0.1:4100`. Throws a message naming the bad pair.
 */
export function parseHostAliases(text: string | undefined): Record<string, string> {
  const aliases: Record<string, string> = {};
  for (const pair of (text ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = pair.indexOf("=");
    const host = pair.slice(0, at).trim().toLowerCase();
    const target = pair.slice(at + 1).trim();
    let origin: URL | undefined;
    try {
      origin = new URL(target);
    } catch {
      origin = undefined;
    }
    const hostOk = at > 0 && /^[a-z0-9.-]+(:\d{1,5})?$/.test(host);
    const originOk =
      origin !== undefined &&
      (origin.protocol === "http:" || origin.protocol === "https:") &&
      origin.pathname === "/" &&
      !origin.search &&
      !origin.username;
    if (!hostOk || !originOk) {
      throw new AppError(
        "CONFIG_INVALID",
        `TOOLSTORE_EGRESS_ALIASES: "${pair}" is not host=origin; write e.g. api.example.com=http://127.0.0.1:4100 (an origin: scheme, host and port, no path)`,
      );
    }
    aliases[host] = (origin as URL).origin;
  }
  return aliases;
}

/** The `host[:port]` of a URL for a message; a string that is no URL, quoted and cut. */
export function hostOfUrl(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return JSON.stringify(String(url).slice(0, 100));
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A HostFetch over the platform `fetch` that enforces the allowlist on every hop. */
export function createAllowlistFetch(options: AllowlistFetchOptions): HostFetch {
  return async (request, signal) => {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let url = request.url;
    let method = request.method.toUpperCase();
    let body = request.body;
    for (let hop = 0; hop <= (options.maxRedirects ?? 5); hop++) {
      if (!isHostAllowed(url, options.allowedHosts)) {
        throw new AppError("FORBIDDEN", `host of ${safeUrl(url)} is not in the allowlist`);
      }
      const hasBody = method !== "GET" && method !== "HEAD";
      const written: HostFetchRequest = {
        url,
        method,
        headers: request.headers,
        ...(hasBody && body !== undefined ? { body } : {}),
      };
      const sent = options.prepareHop ? options.prepareHop(written, request.url) : written;
      let res: Response;
      try {
        // The URL as sent (a secret filled into it); `url` stays as written, for messages and redirects.
        res = await fetch(aliasedUrl(sent.url, options.hostAliases), {
          method,
          headers: sent.headers,
          body: hasBody ? sent.body : undefined,
          redirect: "manual",
          signal: combined,
        });
      } catch (error) {
        if (timeout.aborted)
          throw new AppError("LIMIT_EXCEEDED", `request timed out after ${options.timeoutMs} ms`);
        throw new AppError("BAD_INPUT", `request to ${safeUrl(url)} failed: ${(error as Error).message}`);
      }
      const location = res.headers.get("location");
      if (REDIRECTS.has(res.status) && location) {
        await res.body?.cancel();
        url = new URL(location, url).toString();
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
          method = "GET";
          body = undefined;
        }
        continue;
      }
      const headers: Record<string, string> = {};
      res.headers.forEach((value, key) => {
        headers[key] = value;
      });
      return {
        status: res.status,
        statusText: res.statusText,
        url,
        headers,
        body: await readCapped(res, options.maxBodyBytes),
      };
    }
    throw new AppError("BAD_INPUT", "too many redirects");
  };
}

async function readCapped(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new AppError("LIMIT_EXCEEDED", `response body is larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return JSON.stringify(url.slice(0, 200));
  }
}
