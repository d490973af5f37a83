import { describe, expect, it } from "vitest";
import { createRequestGuard } from "./request-guard";

function req(headers: Record<string, string>, url = "http://127.0.0.1:3000/api/mcp"): Request {
  return new Request(url, { method: "POST", headers });
}

const guard = createRequestGuard({
  host: "127.0.0.1",
  port: 3000,
  publicUrl: "https://tools.example.com",
  allowedHosts: ["intranet.lan", "box.lan:8080"],
  allowedOrigins: ["https://inspector.example"],
});

describe("request guard: Host", () => {
  it("[HOSTS]: refuses a DNS-rebinding request (foreign Host and matching foreign Origin)", () => {
    const verdict = guard.check(req({ host: "evil.example:3000", origin: "http://evil.example:3000" }));
    expect(verdict).toEqual({ ok: false, reason: expect.stringContaining("evil.example") });
  });

  it("[HOSTS]: accepts loopback names on any port, the configured host:port, public URL and listed hosts", () => {
    for (const host of ["localhost:4000", "127.0.0.1:3000", "[::1]:3000", "LOCALHOST", "tools.example.com"]) {
      expect(guard.checkHost(req({ host }, `https://${host}/`)).ok, host).toBe(true);
    }
    expect(guard.checkHost(req({ host: "intranet.lan:9999" })).ok).toBe(true);
    expect(guard.checkHost(req({ host: "box.lan:8080" })).ok).toBe(true);
    expect(guard.checkHost(req({ host: "box.lan:8081" })).ok).toBe(false);
    // The public URL is https on 443: the same name on another port is not it.
    expect(
      guard.checkHost(req({ host: "tools.example.com:8443" }, "https://tools.example.com:8443/")).ok,
    ).toBe(false);
    expect(guard.checkHost(req({ host: "127.0.0.2:3000" })).ok).toBe(false);
    expect(guard.checkHost(req({ host: "user@127.0.0.1:3000" })).ok).toBe(false);
  });

  it("[HOSTS]: X-Forwarded-Host is ignored unless the proxy is trusted", () => {
    const forwarded = req({
      host: "127.0.0.1:3000",
      "x-forwarded-host": "evil.example",
      origin: "http://evil.example",
    });
    // Untrusted: the forwarded name neither passes the Host check nor makes evil.example "same origin".
    expect(guard.check(forwarded)).toEqual({
      ok: false,
      reason: expect.stringContaining("origin http://evil.example"),
    });
    const trusting = createRequestGuard({ host: "127.0.0.1", port: 3000, trustProxy: true });
    expect(trusting.check(forwarded)).toEqual({
      ok: false,
      reason: expect.stringContaining("host evil.example"),
    });
    const behindProxy = createRequestGuard({
      host: "127.0.0.1",
      port: 3000,
      publicUrl: "https://tools.example.com",
      trustProxy: true,
    });
    const viaProxy = req({
      host: "127.0.0.1:3000",
      "x-forwarded-host": "tools.example.com",
      "x-forwarded-proto": "https",
      origin: "https://tools.example.com",
    });
    expect(behindProxy.check(viaProxy)).toEqual({ ok: true });
    expect(behindProxy.isHttps(viaProxy)).toBe(true);
    expect(guard.isHttps(viaProxy)).toBe(false);
  });
});

describe("request guard: X-Forwarded-Proto", () => {
  // What Next.js hands the guard: req.url's scheme is copied from X-Forwarded-Proto, whoever sent it.
  const nextLike = (headers: Record<string, string>) => req(headers, "https://127.0.0.1:3000/api/mcp");
  const claimed = { host: "127.0.0.1:3000", "x-forwarded-proto": "https", origin: "https://127.0.0.1:3000" };

  it("[HOSTS]: without a trusted proxy a forwarded https changes neither the origin check nor the scheme", () => {
    const plain = createRequestGuard({ host: "127.0.0.1", port: 3000 });
    expect(plain.check(nextLike(claimed))).toEqual({
      ok: false,
      reason: expect.stringContaining("origin https://127.0.0.1:3000 is not this site"),
    });
    expect(plain.isHttps(nextLike(claimed))).toBe(false);
    expect(plain.requestOrigin(nextLike(claimed))).toBe("http://127.0.0.1:3000");
    // The same request as Next.js builds it when the client sent no header: its own "http".
    const honest = { host: "127.0.0.1:3000", "x-forwarded-proto": "http", origin: "http://127.0.0.1:3000" };
    expect(plain.check(req(honest))).toEqual({ ok: true });
  });

  it("[HOSTS]: behind a trusted proxy the forwarded scheme counts", () => {
    const trusting = createRequestGuard({ host: "127.0.0.1", port: 3000, trustProxy: true });
    expect(trusting.check(nextLike(claimed))).toEqual({ ok: true });
    expect(trusting.isHttps(nextLike(claimed))).toBe(true);
    expect(trusting.isHttps(nextLike({ ...claimed, "x-forwarded-proto": "http" }))).toBe(false);
  });
});

describe("request guard: Origin", () => {
  const host = { host: "127.0.0.1:3000" };

  it("[ORIGINS]: compares scheme, host and port", () => {
    expect(guard.checkOrigin(req({ ...host, origin: "http://127.0.0.1:3000" })).ok).toBe(true);
    expect(guard.checkOrigin(req({ ...host, origin: "https://127.0.0.1:3000" })).ok).toBe(false);
    expect(guard.checkOrigin(req({ ...host, origin: "http://127.0.0.1:3001" })).ok).toBe(false);
    expect(guard.checkOrigin(req({ ...host, origin: "http://localhost:3000" })).ok).toBe(false);
    expect(guard.checkOrigin(req({ ...host, origin: "https://inspector.example" })).ok).toBe(true);
    expect(guard.checkOrigin(req({ ...host, origin: "http://inspector.example" })).ok).toBe(false);
    expect(guard.checkOrigin(req({ ...host, origin: "https://tools.example.com" })).ok).toBe(true);
    expect(guard.checkOrigin(req(host)).ok).toBe(true);
  });

  it("[ORIGINS]: refuses userinfo, null and non-http origins", () => {
    for (const origin of [
      "http://evil@127.0.0.1:3000",
      "http://a:b@127.0.0.1:3000",
      "null",
      "file://",
      "http://127.0.0.1:3000/path",
    ]) {
      expect(guard.checkOrigin(req({ ...host, origin })).ok, origin).toBe(false);
    }
  });
});
