/** Where a call's placeholders are filled, how, and what is refused (secret-fill.ts). */
import { describe, expect, it } from "vitest";
import { parseEnvTag } from "../toolsets/env-tag";
import { redactSecrets } from "./egress";
import { type CallSecrets, callPlaceholder, fillCallSecrets } from "./secret-fill";

const NONCE = "0123456789abcdef0123456789abcdef";
const VALUE = 'a"b\\c\nd é&<>';
const P = callPlaceholder("KEY", NONCE);
const call = (placements: CallSecrets["placements"] = { KEY: ["header", "body", "query", "path"] }) => ({
  nonce: NONCE,
  values: { KEY: VALUE, PLAIN: "plain-token" },
  placements,
});
const request = (over: Partial<{ url: string; headers: Record<string, string>; body: string }>) => ({
  url: "https://api.example.com/x",
  method: "POST",
  headers: {},
  ...over,
});

describe("secret fill", () => {
  it("fills a JSON body JSON-escaped, so it parses to exactly the value", () => {
    const sent = fillCallSecrets(request({ body: JSON.stringify({ k: P, n: [P] }) }), call());
    expect(JSON.parse(sent.body ?? "")).toEqual({ k: VALUE, n: [VALUE] });
  });

  it("percent-encodes in the URL's path and query and in a form body, even when written encoded", () => {
    const encoded = encodeURIComponent(P);
    const sent = fillCallSecrets(
      request({
        url: `https://api.example.com/v/${P}?k=${encoded}#top`,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `k=${encoded}`,
      }),
      call(),
    );
    expect(sent.url).toBe(
      `https://api.example.com/v/${encodeURIComponent(VALUE)}?k=${encodeURIComponent(VALUE)}#top`,
    );
    expect(new URL(sent.url).searchParams.get("k")).toBe(VALUE);
    expect(new URLSearchParams(sent.body).get("k")).toBe(VALUE);
  });

  it("leaves a placeholder without this call's nonce as text", () => {
    const body = `{{secret:KEY}} {{secret:KEY:ffffffffffffffffffffffffffffffff}}`;
    expect(fillCallSecrets(request({ body, headers: { a: "{{secret:PLAIN}}" } }), call())).toMatchObject({
      body,
      headers: { a: "{{secret:PLAIN}}" },
    });
  });

  it("refuses an undeclared place, a header that cannot carry the value, a host and an unknown name", () => {
    expect(() => fillCallSecrets(request({ body: `"${P}"` }), call({}))).toThrow(
      "secret KEY may go in a header; the toolset put it in the body",
    );
    expect(() =>
      fillCallSecrets(request({ url: `https://api.example.com/?q=${P}` }), call({ KEY: ["header", "body"] })),
    ).toThrow("secret KEY may go in a header or the body; the toolset put it in the URL's query");
    expect(() => fillCallSecrets(request({ headers: { authorization: `Bearer ${P}` } }), call())).toThrow(
      "secret KEY cannot go in a header",
    );
    const plain = callPlaceholder("PLAIN", NONCE);
    expect(
      fillCallSecrets(request({ headers: { authorization: `Bearer ${plain}` } }), call()).headers,
    ).toEqual({
      authorization: "Bearer plain-token",
    });
    expect(() => fillCallSecrets(request({ url: `https://${P}.example.com/` }), call())).toThrow(/host/);
    expect(() =>
      fillCallSecrets(request({ headers: { a: callPlaceholder("NOPE", NONCE) } }), call()),
    ).toThrow("unknown secret NOPE");
  });
});

describe("secret tag and reflection forms", () => {
  it("reads placement words right after the name and keeps the description", () => {
    expect(parseEnvTag("secret", "KEY header body the key")).toEqual({
      name: "KEY",
      secret: true,
      description: "the key",
      placements: ["header", "body"],
    });
    expect(parseEnvTag("secret", "KEY Sent as a bearer token")).toEqual({
      name: "KEY",
      secret: true,
      description: "Sent as a bearer token",
    });
    expect(parseEnvTag("secret", "KEY query, path - body text").placements).toEqual(["query", "path"]);
    expect(parseEnvTag("env", "URL body of it")).toEqual({
      name: "URL",
      secret: false,
      description: "body of it",
    });
  });

  it("masks HTML-escaped, \\u-escaped and lower-case percent-encoded forms", () => {
    const secret = `tok"en\\ab&<x>'9Z`;
    const html = secret
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;");
    const numeric = [...secret].map((c) => (/[A-Za-z0-9]/.test(c) ? c : `&#${c.charCodeAt(0)};`)).join("");
    const hexRefs = [...secret]
      .map((c) => (/[A-Za-z0-9]/.test(c) ? c : `&#x${c.charCodeAt(0).toString(16)};`))
      .join("");
    const unicode = [...secret]
      .map((c) => (/[A-Za-z0-9]/.test(c) ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`))
      .join("");
    const lower = encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    const jsonHtml = JSON.stringify(secret)
      .slice(1, -1)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;");
    for (const form of [html, numeric, hexRefs, unicode, lower, jsonHtml]) {
      expect(redactSecrets(`<p>${form}</p>`, [secret]), form).toBe("<p>***</p>");
    }
  });
});
