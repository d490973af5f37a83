/**
 * Issue #32 end to end: an action hands a toolset's secret placeholder in as data, hoping the
 * egress fills it where the toolset never put it and the receiver reflects it back. Through the
 * whole engine (the shipped webhook toolset, a Python toolset, toolsets that declare where their
 * secrets go) against a local receiver that answers 400 with the body HTML-escaped. No piece of a
 * value (any substring of 4 characters) may come back in any of 15 shapes, nor reach a second
 * request.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../core/actions/engine";
import { builtinModules } from "../../core/capabilities/builtins";
import { createPythonRuntime, type PythonRuntime } from "../../core/python/runtime";
import { testSession } from "../../core/testing/fixtures";
import { createMemoryPorts } from "../../core/testing/memory-ports";
import { createDb, type Db } from "../../db";
import { deployMigrations } from "../../db/migrate";
import { createCapabilityCategoryLookup } from "../../services/capability-categories";
import { type LocalServer, startLocalServer } from "../../toolset-examples/local-server";
import { createToolsetModuleSource, publishToolset, setToolsetEnvVar, updateToolsetSettings } from "./index";

const TOOLSETS = path.resolve(import.meta.dirname, "../../../toolsets");
/** Header-safe, with `"` and `\` (and HTML's specials). */
const HEADER_SECRET = `tok"en\\ab&<x>'9Z`;
/** With `"`, `\` and a newline: no header can carry it. */
const BODY_SECRET = 'pa"ss\\wo\nrd-7Q';
const dir = mkdtempSync(path.join(tmpdir(), "toolstore-exfil-"));
let db: Db;
let engine: Engine;
let python: PythonRuntime;
let receiver: LocalServer;

const html = (s: string) =>
  s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");

/** Every substring of `value` of length 4 or more (the whole value when shorter). */
function pieces(value: string): string[] {
  if (value.length < 4) return [value];
  const out = new Set<string>();
  for (let i = 0; i + 4 <= value.length; i++) out.add(value.slice(i, i + 4));
  return [...out];
}

function leaked(text: string): string[] {
  return [HEADER_SECRET, BODY_SECRET].flatMap((v) => pieces(v).filter((p) => text.includes(p)));
}

const BODY_TOOLSET = `/**
 * Posts a JSON body carrying its key, and one that puts a header-only key in the body.
 * @secret BODY_KEY body header The key, in the JSON body (and a header, which cannot carry it)
 * @secret HEADER_KEY header The key, for headers only
 */
/**
 * Posts the key in a JSON body.
 * @tool write
 */
export async function post(url: string): Promise<unknown> {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ key: env.BODY_KEY }) });
  return r.status;
}
/**
 * Posts the header-only key in the body.
 * @tool write
 */
export async function misplaced(url: string): Promise<unknown> {
  const r = await fetch(url, { method: "POST", body: JSON.stringify({ key: env.HEADER_KEY }) });
  return r.status;
}
/**
 * Sends the body key in a header.
 * @tool write
 */
export async function inHeader(url: string): Promise<unknown> {
  const r = await fetch(url, { headers: { "x-key": env.BODY_KEY ?? "" } });
  return r.status;
}
`;

const PY_TOOLSET = `"""Posts data with a bearer token.

@secret PY_TOKEN header The bearer token
"""
import json
import os

import httpx
from toolstore.toolset import tool


@tool("write")
def send(url: str, data: str) -> dict:
    """Posts data."""
    r = httpx.post(url, content=json.dumps({"data": data}), headers={"authorization": "Bearer " + os.environ["PY_TOKEN"], "content-type": "application/json"})
    return {"status": r.status_code, "text": r.text}
`;

beforeAll(async () => {
  const target = { provider: "sqlite" as const, url: path.join(dir, "x.db") };
  await deployMigrations(target);
  db = createDb(target);
  receiver = await startLocalServer((req, res) => {
    if (req.url.pathname === "/json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: true }));
      return;
    }
    // A careless receiver: refuses every event, reflecting the body HTML-escaped in its page.
    res.writeHead(400, { "content-type": "text/html" });
    res.end(`<html><body><pre>bad event: ${html(req.body)}</pre></body></html>`);
  });
  python = createPythonRuntime({ maxWorkers: 1, spareWorkers: 0 });
  const root = path.join(dir, "toolsets");
  cpSync(path.join(TOOLSETS, "webhook"), path.join(root, "webhook"), { recursive: true });
  mkdirSync(path.join(root, "bodykey"), { recursive: true });
  writeFileSync(path.join(root, "bodykey", "toolset.ts"), BODY_TOOLSET);
  writeFileSync(path.join(root, "bodykey", "doc.md"), "# bodykey\n\nPosts its key.\n");
  mkdirSync(path.join(root, "pyhook"), { recursive: true });
  writeFileSync(path.join(root, "pyhook", "toolset.py"), PY_TOOLSET);
  writeFileSync(path.join(root, "pyhook", "doc.md"), "# pyhook\n\nPosts data.\n");
  for (const name of ["webhook", "bodykey", "pyhook"]) {
    const result = await publishToolset(db, {
      dir: path.join(root, name),
      origin: "sync",
      parsePython: python.parse,
    });
    expect(result.status, name).toBe("created");
    await updateToolsetSettings(db, name, { allowedHosts: ["127.0.0.1"] });
  }
  await setToolsetEnvVar(db, { toolset: "webhook", name: "WEBHOOK_URL", value: `${receiver.baseUrl}/hook` });
  await setToolsetEnvVar(db, { toolset: "webhook", name: "WEBHOOK_TOKEN", value: HEADER_SECRET });
  await setToolsetEnvVar(db, { toolset: "bodykey", name: "BODY_KEY", value: BODY_SECRET });
  await setToolsetEnvVar(db, { toolset: "bodykey", name: "HEADER_KEY", value: HEADER_SECRET });
  await setToolsetEnvVar(db, { toolset: "pyhook", name: "PY_TOKEN", value: HEADER_SECRET });
  engine = createEngine({
    ports: createMemoryPorts(),
    instanceId: "exfil-test",
    limits: { deadlineMs: 150_000 },
    modules: [builtinModules()],
    sources: [createToolsetModuleSource({ db, runtimes: () => ({ typescript: engine.pool, python }) })],
    categories: createCapabilityCategoryLookup(db),
    registryCacheMs: 0,
    approvalPollMs: 10,
    poolOptions: { workers: 1 },
  });
}, 120_000);

afterAll(async () => {
  await engine?.close();
  await python?.close();
  await receiver?.close();
  await db?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

async function run(code: string) {
  const { envelope } = await engine.run({ code, session: testSession({ mode: "auto" }) });
  return envelope;
}

/** The action's side: what it does with what the receiver reflected, in 15 shapes. */
const SHAPES = `
const text = typeof reply.response === "string" ? reply.response : JSON.stringify(reply);
const unhtml = text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const b64 = (s) => { let o = ""; for (let i = 0; i < s.length; i += 3) { const n = (s.charCodeAt(i) << 16) | ((s.charCodeAt(i + 1) || 0) << 8) | (s.charCodeAt(i + 2) || 0); o += B64[(n >> 18) & 63] + B64[(n >> 12) & 63] + (i + 1 < s.length ? B64[(n >> 6) & 63] : "=") + (i + 2 < s.length ? B64[n & 63] : "="); } return o; };
const half = Math.floor(unhtml.length / 2);
const shapes = {
  raw: unhtml,
  html: text,
  hex: [...unhtml].map((c) => c.charCodeAt(0).toString(16).padStart(4, "0")).join(""),
  base64: b64(unescape(encodeURIComponent(unhtml))),
  reversed: [...unhtml].reverse().join(""),
  split: [unhtml.slice(0, half), unhtml.slice(half)],
  codes: [...unhtml].map((c) => c.charCodeAt(0)),
  nested: JSON.stringify({ a: JSON.stringify({ b: unhtml }) }),
  urlEncoded: encodeURIComponent(unhtml),
  jsonTwice: JSON.stringify(JSON.stringify(unhtml)),
  lower: unhtml.toLowerCase(),
  upper: unhtml.toUpperCase(),
  everySecond: [[...unhtml].filter((_, i) => i % 2 === 0).join(""), [...unhtml].filter((_, i) => i % 2 === 1).join("")],
};
console.log("reflected", unhtml);
`;

/** Each shape decoded back to text the way the action would, so a value hidden in it shows. */
interface Shapes {
  raw: string;
  html: string;
  hex: string;
  base64: string;
  reversed: string;
  split: string[];
  codes: number[];
  nested: string;
  urlEncoded: string;
  jsonTwice: string;
  lower: string;
  upper: string;
  everySecond: [string, string];
}

function decodeShapes(shapes: unknown): Record<string, string> {
  const s = shapes as Shapes;
  const interleave = ([a, b]: [string, string]) => [...a].map((c, i) => c + (b[i] ?? "")).join("");
  const hexText = String(s.hex).match(/.{4}/g) ?? [];
  return {
    raw: s.raw,
    html: String(s.html)
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&"),
    hex: hexText.map((h) => String.fromCharCode(Number.parseInt(h, 16))).join(""),
    base64: Buffer.from(String(s.base64), "base64").toString("utf8"),
    reversed: [...String(s.reversed)].reverse().join(""),
    split: s.split.join(""),
    codes: String.fromCharCode(...s.codes),
    nested: JSON.parse(JSON.parse(s.nested).a).b,
    urlEncoded: decodeURIComponent(s.urlEncoded),
    jsonTwice: JSON.parse(JSON.parse(s.jsonTwice)),
    lower: s.lower,
    upper: s.upper,
    everySecond: interleave(s.everySecond),
  };
}

function expectNoPiece(label: string, text: string, caseInsensitive = false): void {
  const haystack = caseInsensitive ? text.toLowerCase() : text;
  const found = [HEADER_SECRET, BODY_SECRET].flatMap((v) =>
    pieces(caseInsensitive ? v.toLowerCase() : v).filter((p) => haystack.includes(p)),
  );
  // Soft: every leaking shape is reported, not only the first.
  expect.soft(found, label).toEqual([]);
}

describe("[SECRETS] a placeholder passed in as data is never filled (issue #32)", {
  timeout: 180_000,
}, () => {
  it("webhook.send with {{secret:WEBHOOK_TOKEN}} in data: the body carries the placeholder, and 15 shapes find no piece", async () => {
    const before = receiver.requests.length;
    const envelope = await run(`
      import { send } from "toolstore/webhook";
      export default async function () {
        const reply = await send({ event: "probe", data: { note: "{{secret:WEBHOOK_TOKEN}}" } });
        ${SHAPES}
        // Forwarded: a second request to the allowed host, carrying what came back.
        await send({ event: "forward", data: shapes });
        return shapes;
      }`);
    expect(envelope.ok, JSON.stringify(envelope.error)).toBe(true);
    const [first, second] = receiver.requests.slice(before);
    const decoded = decodeShapes(envelope.result);
    expect(Object.keys(decoded)).toHaveLength(13);
    for (const [name, text] of Object.entries(decoded)) {
      expectNoPiece(name, text, name === "lower" || name === "upper");
    }
    expectNoPiece("logs", JSON.stringify(envelope.logs));
    expectNoPiece("whole envelope", JSON.stringify(envelope));
    expectNoPiece("forwarded request", second?.body ?? "");
    expect(second?.body).toContain("{{secret:WEBHOOK_TOKEN}}");
    // The token went where the toolset put it; the action's placeholder went as text.
    expect(first?.headers.authorization).toBe(`Bearer ${HEADER_SECRET}`);
    expect(JSON.parse(first?.body ?? "{}").data).toEqual({ note: "{{secret:WEBHOOK_TOKEN}}" });

    // The error shape: whatever was reflected, thrown.
    const thrown = await run(`
      import { send } from "toolstore/webhook";
      export default async function () {
        const reply = await send({ event: "probe", data: "{{secret:WEBHOOK_TOKEN}} {{secret:WEBHOOK_TOKEN:00000000000000000000000000000000}}" });
        throw new Error(JSON.stringify(reply));
      }`);
    expect(thrown.ok).toBe(false);
    expect(JSON.stringify(thrown.error)).toContain("{{secret:WEBHOOK_TOKEN}}");
    expectNoPiece("error", JSON.stringify(thrown));
    expect(
      leaked(
        receiver.requests
          .slice(before + 2)
          .map((r) => r.body)
          .join("\n"),
      ),
    ).toEqual([]);
  });

  it("a Python toolset: a placeholder in its argument reaches the receiver as text", async () => {
    const before = receiver.requests.length;
    const envelope = await run(`
      import { send } from "toolstore/pyhook";
      export default async function () {
        return await send({ url: "${receiver.baseUrl}/hook", data: "{{secret:PY_TOKEN}}" });
      }`);
    expect(envelope.ok, JSON.stringify(envelope.error)).toBe(true);
    const request = receiver.requests.at(before);
    expect(request?.headers.authorization).toBe(`Bearer ${HEADER_SECRET}`);
    expect(JSON.parse(request?.body ?? "{}")).toEqual({ data: "{{secret:PY_TOKEN}}" });
    expectNoPiece("python envelope", JSON.stringify(envelope));
  });

  it("a secret declared for the body reaches a JSON body intact; a header-only one put in the body is refused", async () => {
    const before = receiver.requests.length;
    const posted = await run(`
      import { post } from "toolstore/bodykey";
      export default async () => post({ url: "${receiver.baseUrl}/json" });`);
    expect(posted).toMatchObject({ ok: true, result: 200 });
    expect(JSON.parse(receiver.requests.at(before)?.body ?? "{}")).toEqual({ key: BODY_SECRET });

    const misplaced = await run(`
      import { misplaced } from "toolstore/bodykey";
      export default async () => misplaced({ url: "${receiver.baseUrl}/json" });`);
    expect(misplaced.ok).toBe(false);
    expect(JSON.stringify(misplaced.error)).toContain(
      "secret HEADER_KEY may go in a header; the toolset put it in the body",
    );

    const inHeader = await run(`
      import { inHeader } from "toolstore/bodykey";
      export default async () => inHeader({ url: "${receiver.baseUrl}/json" });`);
    expect(inHeader.ok).toBe(false);
    expect(JSON.stringify(inHeader.error)).toContain(
      "secret BODY_KEY cannot go in a header: its value holds a line break",
    );
    expect(receiver.requests.length).toBe(before + 1);
    expectNoPiece("refusals", JSON.stringify([misplaced, inHeader]));
  });
});
