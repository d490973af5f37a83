/**
 * The exfiltration shapes of the security review (issue #12), run in the real sandbox pool with a
 * secret that contains `"`, `\` and a newline. Toolset code gets the secret as a handle
 * ({{secret:NAME}}); the host fills it in only at egress to a declared host. The second half checks
 * the second line of defence: redaction of the raw, JSON-escaped, base64 and hex forms.
 */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalServer, sendJson, startLocalServer } from "../../toolset-examples/local-server";
import type { RunBindingRequest } from "./binding-runtime";
import { redactSecrets, secretForms, toolsetEnvironment } from "./egress";
import { createSandboxPool, type SandboxPool } from "./pool";

const SECRET = 'pa"ss\\wo\nrd-7Q';
const reversed = [...SECRET].reverse().join("");
const hex = Buffer.from(SECRET).toString("hex");
const base64 = Buffer.from(SECRET).toString("base64");

/** Every way the value could show up in what the agent receives. */
function leaks(outcome: unknown): string[] {
  const text = JSON.stringify(outcome);
  const forms = [
    SECRET,
    JSON.stringify(SECRET).slice(1, -1),
    reversed,
    JSON.stringify(reversed).slice(1, -1),
    hex,
    base64,
    'pa\\"ss', // a prefix of the escaped form
    "wo\\nrd",
    JSON.stringify([..."wo\nrd"]).slice(1, -1), // split into characters
    [..."wo\nrd"].map((c) => c.charCodeAt(0)).join(","), // char codes
  ];
  return forms.filter((f) => text.includes(f));
}

const TOOLSET = `
const hexOf = (s) => [...s].map((c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
function base64(s) {
  let out = "";
  for (let i = 0; i < s.length; i += 3) {
    const n = (s.charCodeAt(i) << 16) | ((s.charCodeAt(i + 1) || 0) << 8) | (s.charCodeAt(i + 2) || 0);
    out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63] + (i + 1 < s.length ? B64[(n >> 6) & 63] : "=") + (i + 2 < s.length ? B64[n & 63] : "=");
  }
  return out;
}
export function result() { return env.TOKEN; }
export function error() { throw new Error("token: " + env.TOKEN); }
export function hex() { return hexOf(env.TOKEN); }
export function b64() { return base64(env.TOKEN); }
export function reversed() { return [...env.TOKEN].reverse().join(""); }
export function chars() { return env.TOKEN.split(""); }
export function codes() { return [...env.TOKEN].map((c) => c.charCodeAt(0)); }
export function logged() { console.log("the token", env.TOKEN); return "ok"; }
export function nested() { return JSON.stringify({ wrapped: JSON.stringify({ t: env.TOKEN }) }); }
export function asKey() { return Object.keys({ [env.TOKEN]: 1 }); }
export async function inUrl(base) { const r = await fetch(base + "/sink?t=" + encodeURIComponent(env.TOKEN)); return r.text(); }
export async function echoed(base) {
  const r = await fetch(base + "/echo", { method: "POST", headers: { authorization: "Bearer " + env.TOKEN }, body: "t=" + env.TOKEN });
  return { status: r.status, body: await r.text(), header: r.headers.get("x-echo") };
}
export async function echoedThrow(base) {
  const r = await fetch(base + "/echo", { method: "POST", body: env.TOKEN });
  throw new Error(await r.text());
}
export async function headerError(base) { await fetch(base + "/sink", { headers: { "x-token": env.TOKEN } }); return "sent"; }
export async function redirected(base) {
  const r = await fetch(base + "/redirect", { headers: { authorization: "Bearer " + env.TOKEN, "x-plain": "kept" } });
  return r.text();
}
export async function redirectedBody(base) {
  const r = await fetch(base + "/redirect", { method: "POST", body: env.TOKEN });
  return r.text();
}
export function sign(data) { return hmac(env.TOKEN, data, { algorithm: "sha256", encoding: "hex" }); }
export function signByName(data) { return hmac("TOKEN", data, { encoding: "base64" }); }
export function signOther() { return hmac("NOT_SET", "x"); }
`;

let pool: SandboxPool;
let declared: LocalServer;
let other: LocalServer;
let otherBase: string;

beforeAll(async () => {
  pool = createSandboxPool({ workers: 1 });
  other = await startLocalServer((req, res) =>
    sendJson(res, 200, { seen: req.headers.authorization ?? null }),
  );
  // Same server, reached as "localhost": another origin, allowed only through `*`.
  otherBase = other.baseUrl.replace("127.0.0.1", "localhost");
  declared = await startLocalServer((req, res) => {
    if (req.url.pathname === "/echo") {
      res.writeHead(200, { "content-type": "text/plain", "x-echo": req.headers.authorization ?? "" });
      res.end(`${req.headers.authorization ?? ""}|${req.body}`);
      return;
    }
    if (req.url.pathname === "/redirect") {
      res.writeHead(307, { location: `${otherBase}/landed` });
      res.end();
      return;
    }
    sendJson(res, 200, { ok: true });
  });
});

afterAll(async () => {
  await pool?.close();
  await declared?.close();
  await other?.close();
});

function call(exportName: string, args: unknown[] = [], overrides: Partial<RunBindingRequest> = {}) {
  const environment = toolsetEnvironment([
    { name: "TOKEN", value: SECRET, secret: true },
    { name: "PLAIN", value: "visible", secret: false },
  ]);
  return pool.runBinding({
    code: TOOLSET,
    exportName,
    args,
    env: environment.env,
    secrets: environment.secrets,
    redact: environment.redact,
    secretPlacements: { TOKEN: ["header", "body"] },
    allowedHosts: ["127.0.0.1", "*"],
    timeoutMs: 10_000,
    ...overrides,
  });
}

describe("[SECRETS] toolset code holds a handle, not the value", () => {
  it("the value never reaches the result, an error, encodings, logs or keys (10 in-sandbox shapes)", async () => {
    const placeholder = "{{secret:TOKEN}}";
    // The code holds the call's own placeholder; what comes back shows it without its nonce, or
    // (transformed beyond recognition) with a nonce no later call fills.
    const handle = /^\{\{secret:TOKEN(:[0-9a-f]{32})?\}\}$/;
    const decoded: Record<string, (value: unknown) => string> = {
      result: (v) => v as string,
      hex: (v) => Buffer.from(v as string, "hex").toString(),
      b64: (v) => Buffer.from(v as string, "base64").toString(),
      reversed: (v) => [...(v as string)].reverse().join(""),
      chars: (v) => (v as string[]).join(""),
      codes: (v) => String.fromCharCode(...(v as number[])),
      nested: (v) => JSON.parse(JSON.parse(v as string).wrapped).t,
      asKey: (v) => (v as string[])[0] as string,
    };
    for (const [name, decode] of Object.entries(decoded)) {
      const outcome = await call(name);
      expect(outcome, name).toMatchObject({ ok: true });
      expect(decode(outcome.ok ? outcome.value : undefined), name).toMatch(handle);
      expect(leaks(outcome), name).toEqual([]);
    }
    expect(await call("result")).toMatchObject({ value: placeholder });
    expect(await call("logged")).toMatchObject({ ok: true, value: "ok" });
    const error = await call("error");
    expect(error).toMatchObject({ ok: false, error: { kind: "threw", message: `token: ${placeholder}` } });
    const logged = await call("logged");
    expect(logged.logs.map((l) => l.text)).toEqual([`the token ${placeholder}`]);
  });

  it("a secret in a place its toolset did not declare (the URL's query) is refused, and nothing is sent", async () => {
    const before = declared.requests.length;
    const outcome = await call("inUrl", [declared.baseUrl]);
    expect(outcome).toMatchObject({
      ok: false,
      error: {
        message: expect.stringContaining(
          "secret TOKEN may go in a header or the body; the toolset put it in the URL's query",
        ),
      },
    });
    expect(declared.requests.length).toBe(before);
    expect(leaks(outcome)).toEqual([]);
  });

  it("a declared host receives the value; its echo is masked before the code sees it", async () => {
    const before = declared.requests.length;
    const outcome = await call("echoed", [declared.baseUrl]);
    // A newline cannot go in a header: refused, naming the secret, and nothing is sent.
    expect(declared.requests.length).toBe(before);
    expect(outcome).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining("secret TOKEN cannot go in a header") },
    });
    expect(leaks(outcome)).toEqual([]);

    const thrown = await call("echoedThrow", [declared.baseUrl]);
    expect(declared.requests.at(-1)?.body).toBe(SECRET);
    expect(thrown).toMatchObject({ ok: false, error: { kind: "threw", message: "|***" } });
    expect(leaks(thrown)).toEqual([]);
  });

  it("an invalid header value fails without putting the value in the error", async () => {
    const outcome = await call("headerError", [declared.baseUrl]);
    expect(outcome).toMatchObject({ ok: false, error: { kind: "threw" } });
    expect(leaks(outcome)).toEqual([]);
  });

  it("a host reached only through `*` never receives the value", async () => {
    const before = other.requests.length;
    const outcome = await call("echoedThrow", [otherBase]);
    expect(outcome).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining("declares by name") },
    });
    expect(other.requests.length).toBe(before);
  });

  it("a redirect to another origin drops the secret header and refuses to resend a secret body", async () => {
    const plainToken = "plain-token-without-newline";
    const environment = toolsetEnvironment([{ name: "TOKEN", value: plainToken, secret: true }]);
    const overrides = { env: environment.env, secrets: environment.secrets, redact: environment.redact };
    const outcome = await call("redirected", [declared.baseUrl], overrides);
    expect(declared.requests.at(-1)?.headers.authorization).toBe(`Bearer ${plainToken}`);
    const landed = other.requests.at(-1);
    expect(landed?.url.pathname).toBe("/landed");
    expect(landed?.headers.authorization).toBeUndefined();
    expect(landed?.headers["x-plain"]).toBe("kept");
    expect(outcome).toMatchObject({ ok: true, value: JSON.stringify({ seen: null }) });

    const before = other.requests.length;
    const body = await call("redirectedBody", [declared.baseUrl], overrides);
    expect(body).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining("after a redirect") },
    });
    expect(other.requests.length).toBe(before);
  });

  it("hmac signs with the secret by handle or name and returns only the signature", async () => {
    const signed = await call("sign", ["payload"]);
    expect(signed).toEqual(
      expect.objectContaining({
        ok: true,
        value: createHmac("sha256", SECRET).update("payload").digest("hex"),
      }),
    );
    const byName = await call("signByName", ["payload"]);
    expect(byName).toMatchObject({
      ok: true,
      value: createHmac("sha256", SECRET).update("payload").digest("base64"),
    });
    expect(leaks(signed)).toEqual([]);
    expect(await call("signOther")).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining("unknown secret NOT_SET") },
    });
  });
});

describe("[SECRETS] redaction, the second line of defence", () => {
  it("masks the raw value, its JSON-escaped form, base64 and hex", () => {
    const text = [
      SECRET,
      JSON.stringify(SECRET),
      JSON.stringify({ a: SECRET }),
      base64,
      hex,
      hex.toUpperCase(),
    ].join(" ");
    const masked = redactSecrets(text, [SECRET]);
    expect(masked).toBe(`*** "***" {"a":"***"} *** *** ***`);
    expect(secretForms(SECRET)).toContain('pa\\"ss\\\\wo\\nrd-7Q');
  });

  it("masks a value the code holds in raw form in the value, the error and the logs", async () => {
    // A runtime that still hands the raw value (legacy shape) is caught by redaction.
    const code = `export function leak() { console.log("t", env.T); return { t: env.T, h: [...env.T].map((c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("") }; }
export function fail() { throw new Error(JSON.stringify({ t: env.T })); }`;
    const base = { code, args: [], env: { T: SECRET }, redact: [SECRET], allowedHosts: [], timeoutMs: 5000 };
    const value = await pool.runBinding({ ...base, exportName: "leak" });
    expect(value).toMatchObject({ ok: true, value: { t: "***", h: "***" } });
    expect(value.logs.map((l) => l.text)).toEqual(["t ***"]);
    const thrown = await pool.runBinding({ ...base, exportName: "fail" });
    expect(thrown).toMatchObject({ ok: false, error: { message: '{"t":"***"}' } });
    expect(leaks([value, thrown])).toEqual([]);
  });
});
