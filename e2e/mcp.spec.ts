import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect, test } from "@playwright/test";
import { adminContext, screenshot } from "./helpers";

const PIXEL =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

test("[MCP]: an execute_code call waits, is approved in the console's queue, and completes", async ({
  browser,
  baseURL,
}) => {
  const { page, context } = await adminContext(browser);
  const key = await page.evaluate(async () => {
    const res = await fetch("/api/trpc/apiKeys.create", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ name: "e2e-agent", mode: "default", modules: ["*"] }),
    });
    return (await res.json()).result.data.key as string;
  });
  expect(key).toMatch(/^tsk_/);

  const client = new Client({ name: "e2e-agent", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/api/mcp", baseURL), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  const progress: string[] = [];
  const call = client.callTool(
    {
      name: "execute_code",
      arguments: {
        title: "save a pixel",
        code: `import { save } from "toolstore/assets";
               export default async function () { return await save({ data_base64: "${PIXEL}" }); }`,
      },
    },
    undefined,
    { timeout: 60_000, onprogress: (p) => progress.push(p.message ?? "") },
  );

  await page.goto("/approvals");
  const card = page.getByTestId("approval-card").filter({ hasText: "assets.save" });
  await expect(card).toBeVisible();
  await expect(card).toContainText('key "e2e-agent"');
  await screenshot(page, "approvals-mcp");
  await card.getByRole("button", { name: /Allow once/ }).click();

  const result = (await call) as unknown as {
    structuredContent: { ok: boolean; result: { asset_id: string }; calls: { decision: string }[] };
  };
  expect(result.structuredContent.ok).toBe(true);
  expect(result.structuredContent.result.asset_id).toBeTruthy();
  expect(result.structuredContent.calls[0]?.decision).toBe("allow");
  expect(progress.some((m) => m.includes("/approvals/"))).toBe(true);

  const image = (await client.callTool({
    name: "view_image",
    arguments: { asset_id: result.structuredContent.result.asset_id },
  })) as { content: { type: string; mimeType?: string }[] };
  expect(image.content[0]).toMatchObject({ type: "image", mimeType: "image/png" });
  await client.close();
  await context.close();
});

test("[MCP]: the endpoint answers 401 without a key and 403 for a foreign origin", async ({ request }) => {
  const body = { jsonrpc: "2.0", id: 1, method: "tools/list" };
  const headers = { accept: "application/json, text/event-stream" };
  const anonymous = await request.post("/api/mcp", { data: body, headers });
  expect(anonymous.status()).toBe(401);
  expect(anonymous.headers()["www-authenticate"]).toContain("Bearer");
  const foreign = await request.post("/api/mcp", {
    data: body,
    headers: { ...headers, origin: "https://evil.example", authorization: "Bearer tsk_x" },
  });
  expect(foreign.status()).toBe(403);
});
