import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect, test } from "@playwright/test";
import { adminContext } from "./helpers";

/** The value of one sample of the Prometheus text (0 when absent). */
function sample(text: string, name: string, labels = ""): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ""} `));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

test("[OPERATE]: /healthz, /readyz and /metrics answer without a session, through the proxy, on the built app", async ({
  request,
  browser,
  baseURL,
}) => {
  const health = await request.get("/healthz");
  expect(health.status()).toBe(200);
  expect(await health.json()).toEqual({ status: "ok" });

  // The first readiness probe starts the sandbox pool; a load balancer keeps asking.
  await expect
    .poll(async () => (await request.get("/readyz")).status(), { timeout: 30_000, intervals: [500] })
    .toBe(200);
  const ready = (await (await request.get("/readyz")).json()) as { checks: Record<string, { ok: boolean }> };
  expect(Object.keys(ready.checks).sort()).toEqual(["database", "migrations", "sandbox"]);

  // A load balancer addresses the instance by IP: the console answers 403, the probes answer.
  const foreign = { headers: { host: "10.9.8.7:3000" } };
  expect((await request.get("/signin", foreign)).status()).toBe(403);
  expect((await request.get("/healthz", foreign)).status()).toBe(200);

  // TOOLSTORE_METRICS=local (default) on a server listening on 127.0.0.1: this client is local.
  const before = await (await request.get("/metrics")).text();
  expect(before).toContain("# TYPE toolstore_runs_total counter");
  expect(before).toContain("# TYPE process_resident_memory_bytes gauge");

  const { page, context } = await adminContext(browser);
  const key = await page.evaluate(async () => {
    const res = await fetch("/api/trpc/apiKeys.create", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ name: "e2e-operate", mode: "auto", modules: ["*"] }),
    });
    return (await res.json()).result.data.key as string;
  });
  await context.close();
  const client = new Client({ name: "e2e-operate", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/api/mcp", baseURL), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  const code = `import { evaluate } from "toolstore/calculator";
export default async function () { return await evaluate({ expression: "6 * 7" }); }`;
  await client.callTool({ name: "execute_code", arguments: { code } });
  await client.close();

  const after = await (await request.get("/metrics")).text();
  expect(sample(after, "toolstore_runs_total", 'outcome="ok"')).toBe(
    sample(before, "toolstore_runs_total", 'outcome="ok"') + 1,
  );
  expect(
    sample(after, "toolstore_gate_decisions_total", 'category="read",decision="allow"') -
      sample(before, "toolstore_gate_decisions_total", 'category="read",decision="allow"'),
  ).toBe(1);
  expect(sample(after, "toolstore_sandbox_workers")).toBeGreaterThan(0);
});
