import fs from "node:fs";
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect, test } from "@playwright/test";
import { E2E_PORT } from "../playwright.config";
import { servingNodeFlags } from "../scripts/serving-env";
import { adminContext } from "./helpers";

/** A raw GET with a chosen Host (a browser cannot forge it): status, headers and body. */
function rawGet(path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port: E2E_PORT, path, headers }, (res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on("error", reject);
      req.end();
    },
  );
}

test("[FRONT]: npm start answers /api/mcp without Next's router, with proxy.ts's guard and headers", async ({
  browser,
  baseURL,
}) => {
  // Next's App Router marks its route answers with `Vary: rsc, ...`; the front server does not.
  const anonymous = await rawGet("/api/mcp", { host: `127.0.0.1:${E2E_PORT}` });
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers.vary ?? "").not.toContain("rsc");
  expect(anonymous.headers["x-frame-options"]).toBe("DENY");
  expect(anonymous.headers["x-content-type-options"]).toBe("nosniff");
  expect(anonymous.headers["referrer-policy"]).toBe("same-origin");

  const rebinding = await rawGet("/api/mcp?x=1", { host: `evil.example:${E2E_PORT}` });
  expect(rebinding.status).toBe(403);
  expect(rebinding.body).toContain("host evil.example");
  const foreignOrigin = await rawGet("/api/mcp", {
    host: `127.0.0.1:${E2E_PORT}`,
    origin: "https://evil.example",
  });
  expect(foreignOrigin.status).toBe(403);

  // Everything else is still Next's: the console page and its own guard.
  expect((await rawGet("/signin", { host: `127.0.0.1:${E2E_PORT}` })).status).toBe(200);
  expect((await rawGet("/signin", { host: `evil.example:${E2E_PORT}` })).status).toBe(403);

  // A real SDK client runs an action through the direct path.
  const { page, context } = await adminContext(browser);
  const key = await page.evaluate(async () => {
    const res = await fetch("/api/trpc/apiKeys.create", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ name: "e2e-front", mode: "auto", modules: ["*"] }),
    });
    return (await res.json()).result.data.key as string;
  });
  const client = new Client({ name: "e2e-front", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/api/mcp", baseURL), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  const result = (await client.callTool({
    name: "execute_code",
    arguments: { code: "export default async function () { return 6 * 7; }" },
  })) as { content: { type: string; text?: string }[] };
  expect(JSON.parse(result.content[0]?.text ?? "{}")).toMatchObject({ ok: true, result: 42 });
  await client.close();
  await context.close();
});

test("[FRONT]: npm start's serving process runs with the serving flags and environment", async () => {
  // The process that listens on the e2e port, found from /proc as an operator would (ps).
  const serving = fs
    .readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map((pid) => {
      try {
        return {
          argv: fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0"),
          env: fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0"),
        };
      } catch {
        return undefined; // gone, or not ours to read
      }
    })
    .find((p) => p?.argv.some((a) => a.endsWith("scripts/serve.ts")) && p.argv.includes(String(E2E_PORT)));
  expect(serving, "the serving process of the e2e server").toBeDefined();
  expect(serving?.argv).toEqual(expect.arrayContaining(servingNodeFlags()));
  expect(serving?.env).toContain("MALLOC_ARENA_MAX=2");
});
