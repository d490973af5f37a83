/**
 * Which URLs a toolset's `fetch` may reach. The sandbox pool asks this before every request; the
 * rule lives here so the console, the docs and the engine agree on one meaning of "allowed host".
 *
 * An entry is a host name (`api.example.com`), a wildcard for subdomains (`*.example.com`, not the
 * apex), optionally with a port (`localhost:8080`; without a port any port matches). Only http and
 * https URLs are allowed; credentials in URLs are refused.
 */
export type FetchCheck = { ok: true; url: URL } | { ok: false; reason: string };

export function checkFetchUrl(rawUrl: string, allowedHosts: readonly string[]): FetchCheck {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, reason: `fetch: "${String(rawUrl).slice(0, 200)}" is not an absolute URL` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: `fetch: only http and https are allowed, not ${url.protocol}` };
  }
  if (url.username || url.password) {
    return { ok: false, reason: "fetch: credentials in the URL are not allowed; send a header instead" };
  }
  const host = url.hostname.toLowerCase();
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  for (const entry of allowedHosts) {
    if (hostMatches(entry.toLowerCase(), host, port)) return { ok: true, url };
  }
  const list = allowedHosts.length ? allowedHosts.join(", ") : "none";
  return {
    ok: false,
    reason: `fetch: host "${url.host}" is not allowed for this toolset (allowed: ${list}); an admin adds hosts in the console`,
  };
}

function hostMatches(entry: string, host: string, port: string): boolean {
  let pattern = entry;
  let wantPort: string | undefined;
  const bracket = /^(\[[^\]]+\])(?::(\d+))?$/.exec(entry);
  if (bracket) {
    pattern = bracket[1] as string;
    wantPort = bracket[2];
  } else {
    const colon = entry.lastIndexOf(":");
    if (colon > 0) {
      pattern = entry.slice(0, colon);
      wantPort = entry.slice(colon + 1);
    }
  }
  if (wantPort !== undefined && wantPort !== port) return false;
  if (pattern.startsWith("*.")) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return host === pattern;
}
