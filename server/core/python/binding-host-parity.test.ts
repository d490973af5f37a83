/**
 * The two runtimes share one binding host (sandbox/binding-host.ts), so a toolset meets the same
 * host whatever its language: a host it does not declare is refused as `permission_denied` with
 * the same words, and every form of a secret value (raw, escaped, base64, hex, percent-encoded) is
 * masked in its value, its error and its logs. Both drifted before: Python said `forbidden`, and
 * masked only the raw value.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refusedHost } from "../sandbox/binding-host";
import type { BindingResult, RunBindingRequest } from "../sandbox/binding-runtime";
import type { HostFetch } from "../sandbox/host-fetch";
import { createSandboxPool, type SandboxPool } from "../sandbox/pool";
import { createPythonRuntime, type PythonRuntime } from "./runtime";

const SECRET = 'pa"ss\\wo\nrd-7Q';
const FORMS = {
  base64: Buffer.from(SECRET).toString("base64"),
  hex: Buffer.from(SECRET).toString("hex"),
  url: encodeURIComponent(SECRET),
};

const PYTHON = `"""
@hosts api.declared.test
"""
import base64
import os
import urllib.parse

import httpx
from toolstore.toolset import tool


@tool("read")
def refused() -> dict:
    try:
        httpx.get("https://elsewhere.test/x")
        return {"error": None}
    except httpx.HTTPError as e:
        return {"error": e.error, "message": str(e)}


@tool("read")
def forms() -> dict:
    raw = os.environ["T"].encode()
    print("b64", base64.b64encode(raw).decode())
    return {
        "base64": base64.b64encode(raw).decode(),
        "hex": raw.hex(),
        "url": urllib.parse.quote(os.environ["T"], safe=""),
    }


@tool("read")
def fail() -> str:
    raise ValueError("hex " + os.environ["T"].encode().hex())
`;

const TYPESCRIPT = `
export async function refused() {
  try { await fetch("https://elsewhere.test/x"); return { error: null }; }
  catch (e) { return { error: e.error, message: e.message }; }
}`;

let python: PythonRuntime;
let pool: SandboxPool;
const fetched: string[] = [];
const fetchStub: HostFetch = async (request) => {
  fetched.push(request.url);
  return { status: 200, statusText: "OK", url: request.url, headers: {}, body: "{}" };
};

beforeAll(async () => {
  python = createPythonRuntime({ maxWorkers: 1, spareWorkers: 1 });
  pool = createSandboxPool({ workers: 1 });
  await python.warm();
}, 120_000);

afterAll(async () => {
  await python?.close();
  await pool?.close();
});

function request(language: "python" | "typescript", exportName: string): RunBindingRequest {
  return {
    trustDomain: `parity-${language}@1`,
    code: language === "python" ? PYTHON : TYPESCRIPT,
    exportName,
    args: [],
    kwargs: {},
    // The raw value in env is the legacy shape: redaction, the second line of defence, must catch it.
    env: { T: SECRET },
    redact: [SECRET],
    allowedHosts: ["api.declared.test"],
    timeoutMs: 20_000,
    fetch: fetchStub,
  };
}

function returnedValue(result: BindingResult): unknown {
  expect(result).toMatchObject({ ok: true });
  return result.ok ? result.value : undefined;
}

describe("[BINDING-HOST] one host for both runtimes", { timeout: 120_000 }, () => {
  it("refuses a host the toolset does not declare as permission_denied, with the same words", async () => {
    const expected = refusedHost("https://elsewhere.test/x", ["api.declared.test"]);
    expect(expected.message).toContain("elsewhere.test is not among this toolset's allowed hosts");
    const fromPython = returnedValue(await python.runBinding(request("python", "refused")));
    const fromTypescript = returnedValue(await pool.runBinding(request("typescript", "refused")));
    expect(fromPython).toEqual({ error: "permission_denied", message: expected.message });
    expect(fromTypescript).toEqual({ error: "permission_denied", message: expected.message });
    expect(fetched).toEqual([]);
  });

  it("masks the base64, hex and percent-encoded forms of a secret in a Python value, error and logs", async () => {
    const result = await python.runBinding(request("python", "forms"));
    expect(result).toMatchObject({ ok: true, value: { base64: "***", hex: "***", url: "***" } });
    expect(result.logs.map((l) => l.text).join("\n")).toBe("b64 ***");
    const thrown = await python.runBinding(request("python", "fail"));
    expect(thrown).toMatchObject({ ok: false, error: { kind: "threw" } });
    const text = JSON.stringify([result, thrown]);
    for (const form of Object.values(FORMS)) expect(text).not.toContain(form);
    expect(text).not.toContain(FORMS.hex.toUpperCase());
  });
});
