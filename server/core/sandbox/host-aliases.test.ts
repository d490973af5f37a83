/**
 * Host aliases (TOOLSTORE_EGRESS_ALIASES): a declared host is connected to another origin, while
 * the allow-list, the secrets and the URL the code sees stay those of the host it wrote.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEgressFetch } from "./egress";
import { aliasedUrl, parseHostAliases } from "./host-fetch";

let server: http.Server;
let origin = "";
const seen: { url: string; auth: string | undefined; host: string | undefined }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? "", auth: req.headers.authorization, host: req.headers.host });
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

describe("host aliases", () => {
  it("sends a declared host to its alias, with its secrets, and still refuses an undeclared one", async () => {
    const aliases = parseHostAliases(`api.example.com=${origin}, other.example.com=${origin}`);
    const egress = createEgressFetch({
      allowedHosts: ["api.example.com"],
      secrets: { TOKEN: "s3cret-value" },
      nonce: "ab12",
      timeoutMs: 5_000,
      hostAliases: aliases,
    });
    const res = await egress({
      url: "https://api.example.com/data/2.5/weather?q=Paris",
      method: "GET",
      headers: { authorization: "Bearer {{secret:TOKEN:ab12}}" },
    });
    expect(res.status).toBe(200);
    expect(res.url).toBe("https://api.example.com/data/2.5/weather?q=Paris");
    expect(seen.at(-1)).toMatchObject({ url: "/data/2.5/weather?q=Paris", auth: "Bearer s3cret-value" });
    // An alias does not add a host to the toolset's allow-list.
    await expect(egress({ url: "https://other.example.com/x", method: "GET", headers: {} })).rejects.toThrow(
      /not in the allowlist/,
    );
  });

  it("names a bad pair and the form to write", () => {
    expect(parseHostAliases(undefined)).toEqual({});
    expect(parseHostAliases("Api.Example.com:8443=https://mirror.example.org")).toEqual({
      "api.example.com:8443": "https://mirror.example.org",
    });
    expect(
      aliasedUrl("https://api.example.com:8443/a?b=1", { "api.example.com:8443": "http://127.0.0.1:9" }),
    ).toBe("http://127.0.0.1:9/a?b=1");
    for (const bad of ["api.example.com", "api.example.com=ftp://x", "=http://x", "a.com=http://x/path"]) {
      expect(() => parseHostAliases(bad)).toThrow(
        /TOOLSTORE_EGRESS_ALIASES: .* is not host=origin; write e\.g\./,
      );
    }
  });
});
