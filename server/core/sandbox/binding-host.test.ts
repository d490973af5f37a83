/**
 * The binding host on its own: the allow-list before the fetch, secrets filled in only at egress,
 * every secret form masked on the way back, hmac on the host, and each failure a value with its
 * code (the codes both runtimes hand their guests).
 */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { createBindingHost, refusedHost } from "./binding-host";
import type { HostFetch, HostFetchRequest } from "./host-fetch";

const SECRET = "s3cret-Value/+=";

function recordingFetch(body = "{}") {
  const sent: HostFetchRequest[] = [];
  const fetch: HostFetch = async (request) => {
    sent.push(request);
    return { status: 200, statusText: "OK", url: request.url, headers: { "x-echo": SECRET }, body };
  };
  return { sent, fetch };
}

function host(fetch: HostFetch, extra: { maxFetches?: number } = {}) {
  return createBindingHost({
    allowedHosts: ["api.example.com"],
    secrets: { TOKEN: SECRET },
    timeoutMs: 5_000,
    fetch,
    ...extra,
  });
}

describe("binding host", () => {
  it("refuses a host the toolset does not allow before anything is sent", async () => {
    const { sent, fetch } = recordingFetch();
    const reply = await host(fetch).call("fetch", JSON.stringify({ url: "https://evil.example.org/x" }));
    expect(reply).toEqual({
      ok: false,
      error: refusedHost("https://evil.example.org/x", ["api.example.com"]),
    });
    expect(reply.ok ? "" : reply.error.message).toMatch(
      /^host not allowed: evil\.example\.org is not among this toolset's allowed hosts \(api\.example\.com\); an admin adds it/,
    );
    expect(sent).toEqual([]);
    expect(refusedHost("not a url", []).message).toContain(
      '"not a url" is not among this toolset\'s allowed hosts (none)',
    );
  });

  it("fills a secret placeholder at egress and masks every form of it in what comes back", async () => {
    const forms = [
      SECRET,
      Buffer.from(SECRET).toString("base64"),
      Buffer.from(SECRET).toString("hex"),
      encodeURIComponent(SECRET),
    ];
    const { sent, fetch } = recordingFetch(forms.join(" "));
    const bindingHost = host(fetch);
    expect(bindingHost.env.TOKEN).toMatch(/^\{\{secret:TOKEN:[0-9a-f]{32}\}\}$/);
    const reply = await bindingHost.fetch({
      url: "https://api.example.com/data",
      headers: { authorization: `Bearer ${bindingHost.env.TOKEN}`, "x-data": "{{secret:TOKEN}}" },
    });
    // Only the call's own placeholder is filled; one without its nonce (data) stays text.
    expect(sent[0]).toMatchObject({
      method: "GET",
      headers: { authorization: `Bearer ${SECRET}`, "x-data": "{{secret:TOKEN}}" },
    });
    expect(reply).toMatchObject({
      ok: true,
      value: { body: "*** *** *** ***", headers: { "x-echo": "***" } },
    });
  });

  it("masks the forms of a value in a result, in logs, and keeps a result whose JSON masking broke as text", () => {
    const bindingHost = createBindingHost({ allowedHosts: [], redact: [SECRET], timeoutMs: 1_000 });
    expect(bindingHost.masks).toBe(true);
    const hex = Buffer.from(SECRET).toString("hex").toUpperCase();
    expect(bindingHost.redactResult(JSON.stringify({ t: hex }))).toEqual({
      json: '{"t":"***"}',
      value: { t: "***" },
    });
    expect(bindingHost.redactResult(null)).toEqual({ json: "null", value: null });
    const spanning = createBindingHost({ allowedHosts: [], redact: ['a":"b'], timeoutMs: 1_000 });
    expect(spanning.redactResult('{"a":"b"}')).toEqual({ json: '{"***"}', value: '{"***"}' });
    expect(bindingHost.redactLogs([{ level: "log", text: `t ${encodeURIComponent(SECRET)}` }])).toEqual([
      { level: "log", text: "t ***" },
    ]);
    expect(createBindingHost({ allowedHosts: [], redact: [""], timeoutMs: 1_000 }).masks).toBe(false);
  });

  it("signs with a secret by name and says which name is unknown", async () => {
    const bindingHost = host(recordingFetch().fetch);
    const signed = await bindingHost.call("hmac", JSON.stringify({ secret: "{{secret:TOKEN}}", data: "x" }));
    expect(signed).toEqual({ ok: true, value: createHmac("sha256", SECRET).update("x").digest("hex") });
    expect(await bindingHost.call("hmac", JSON.stringify({ secret: "NOPE", data: "x" }))).toMatchObject({
      ok: false,
      error: { error: "bad_input", message: expect.stringContaining("unknown secret NOPE") },
    });
  });

  it("answers a malformed request, an unknown call and a failed fetch with their codes", async () => {
    const failing: HostFetch = async () => {
      throw new Error(`connection reset while sending ${SECRET}`);
    };
    const timingOut: HostFetch = async () => {
      throw new AppError("LIMIT_EXCEEDED", "request timed out after 5 ms");
    };
    const url = JSON.stringify({ url: "https://api.example.com/" });
    expect(await host(failing).call("fetch", "{")).toMatchObject({
      ok: false,
      error: { error: "bad_input" },
    });
    expect(await host(failing).call("exec", "{}")).toMatchObject({
      ok: false,
      error: { error: "bad_input", message: "unknown host call exec" },
    });
    expect(await host(failing).call("fetch", url)).toEqual({
      ok: false,
      error: { error: "fetch_failed", message: "connection reset while sending ***" },
    });
    expect(await host(timingOut).call("fetch", url)).toMatchObject({
      ok: false,
      error: { error: "timeout" },
    });
  });

  it("ends a request at its own timeout as a timeout", async () => {
    const hanging: HostFetch = (_request, signal) =>
      new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason)));
    const reply = await host(hanging).fetch({ url: "https://api.example.com/slow", timeoutMs: 20 });
    expect(reply).toMatchObject({ ok: false, error: { error: "timeout" } });
    const renamed = await host(async () => {
      const error = new Error("deadline");
      error.name = "TimeoutError";
      throw error;
    }).fetch({ url: "https://api.example.com/" });
    expect(renamed).toMatchObject({ ok: false, error: { error: "timeout", message: "deadline" } });
  });

  it("stops a call's requests past its budget", async () => {
    const { sent, fetch } = recordingFetch();
    const bindingHost = host(fetch, { maxFetches: 2 });
    const url = { url: "https://api.example.com/" };
    expect(await bindingHost.fetch(url)).toMatchObject({ ok: true });
    expect(await bindingHost.fetch(url)).toMatchObject({ ok: true });
    expect(await bindingHost.fetch(url)).toMatchObject({ ok: false, error: { error: "limit_exceeded" } });
    expect(sent).toHaveLength(2);
  });
});
