import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect, type Page, test } from "@playwright/test";
import { type OAuthUpstream, startOAuthUpstream } from "../server/modules/mcp-servers/testing/oauth-upstream";
import { adminContext, screenshot } from "./helpers";

/**
 * An upstream MCP server that needs OAuth (the SDK's own server auth support, started here) is
 * added from the console; the admin presses Authorize, signs in at the upstream in Chromium and
 * comes back; an action calls its tool over MCP. Its tokens live 30 s, under ToolStore's one-minute
 * refresh margin: a token is refreshed once half spent (rotating the refresh token, with the
 * resource), not on every call; when the upstream refuses a refresh, calls say to reauthorize and the server page and the approvals inbox
 * show a "reauthorize" card, until the admin authorizes again.
 */
test.describe.configure({ mode: "serial" });

let upstream: OAuthUpstream;
test.beforeAll(async () => {
  upstream = await startOAuthUpstream({ interactive: true, expiresIn: 30 });
});
test.afterAll(async () => {
  await upstream?.close();
});

const CODE = `import { whoami } from "toolstore/notes";
export default async function () { return await whoami({ n: 7 }); }`;

async function createKey(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const res = await fetch("/api/trpc/apiKeys.create", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ name: "e2e-upstream-oauth", mode: "auto", modules: ["notes"] }),
    });
    return (await res.json()).result.data.key as string;
  });
}

async function callWhoami(baseURL: string, key: string) {
  const client = new Client({ name: "e2e-upstream-oauth", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/api/mcp", baseURL), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  try {
    const result = await client.callTool({ name: "execute_code", arguments: { code: CODE } });
    return result.structuredContent as { ok: boolean; result?: unknown; error?: { message: string } };
  } finally {
    await client.close();
  }
}

/** On the server's page: Authorize, sign in at the upstream, and back to the page, authorized. */
async function authorizeInBrowser(page: Page, button: RegExp) {
  await page
    .getByTestId(/oauth-card|reauthorize-card/)
    .getByRole("button", { name: button })
    .click();
  await expect(page.getByRole("heading", { name: "Sign in to oauth-notes" })).toBeVisible();
  expect(new URL(page.url()).origin).toBe(upstream.base);
  const asked = new URL(page.url());
  expect(asked.searchParams.get("code_challenge_method")).toBe("S256");
  expect(asked.searchParams.get("resource")).toBe(upstream.mcpUrl.href);
  await page.getByRole("link", { name: "Allow ToolStore" }).click();
  await expect(page).toHaveURL(/\/mcp-servers\/notes\?authorized=1$/);
  await expect(page.getByTestId("oauth-card").locator(".pill")).toHaveText("authorized");
}

test("[OAUTH UPSTREAM]: an admin authorizes an OAuth MCP server in the browser; its tool runs, its tokens refresh, a refused refresh asks to reauthorize", async ({
  browser,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const { page, context } = await adminContext(browser);
  await page.goto("/mcp-servers");
  await page.getByRole("button", { name: "Add server…" }).click();
  const form = page.getByRole("form", { name: "Add an MCP server" });
  await form.getByLabel(/^Name/).fill("notes");
  await form.getByLabel("Streamable HTTP (a URL)").check();
  await form.getByLabel(/^URL/).fill(upstream.mcpUrl.href);
  await form.getByRole("button", { name: "Add server" }).click();
  await expect(page).toHaveURL(/\/mcp-servers\/notes$/, { timeout: 30_000 });
  const card = page.getByTestId("oauth-card");
  await expect(card).toContainText("not authorized");
  await screenshot(page, "mcp-server-oauth-unauthorized");

  await authorizeInBrowser(page, /^Authorize$/);
  expect(upstream.seen.codes.at(-1)?.resource).toBe(upstream.mcpUrl.href);
  await expect(card).toContainText(`${upstream.base}/`);
  await expect(page.getByTestId("tool-whoami")).toContainText("pending", { timeout: 20_000 });
  await page.getByRole("button", { name: /Accept all proposed/ }).click();
  await expect(page.getByTestId("tool-whoami")).toContainText("accepted");
  await screenshot(page, "mcp-server-oauth-authorized");

  // A fresh 30 s token is used as it is; once half of it is spent, the next call refreshes it,
  // once, with the resource, and the calls right after use the new one.
  const key = await createKey(page);
  const refreshes = upstream.seen.refreshes.length;
  const first = await callWhoami(baseURL ?? "", key);
  expect(first.ok, JSON.stringify(first)).toBe(true);
  expect(JSON.stringify(first.result)).toContain('"n":7');
  expect(upstream.seen.refreshes.length).toBe(refreshes);
  await page.waitForTimeout(16_000);
  for (let i = 0; i < 2; i++) expect((await callWhoami(baseURL ?? "", key)).ok).toBe(true);
  expect(upstream.seen.refreshes.length).toBe(refreshes + 1);
  expect(upstream.seen.refreshes.at(-1)?.resource).toBe(upstream.mcpUrl.href);

  // The upstream revokes the grant: the next refresh is refused, the call says to reauthorize,
  // and both cards ask for it.
  upstream.refuseRefresh(true);
  await page.waitForTimeout(16_000);
  const refused = await callWhoami(baseURL ?? "", key);
  expect(refused.ok).toBe(false);
  expect(JSON.stringify(refused)).toMatch(/Authorize/);
  await page.reload();
  const reauth = page.getByTestId("reauthorize-card");
  await expect(reauth).toContainText("reauthorize");
  await page.goto("/approvals");
  await expect(page.getByTestId("reauthorize-card").filter({ hasText: "notes" })).toBeVisible({
    timeout: 15_000,
  });
  await screenshot(page, "approvals-reauthorize");

  upstream.refuseRefresh(false);
  await page.goto("/mcp-servers/notes");
  await authorizeInBrowser(page, /^Reauthorize$/);
  const again = await callWhoami(baseURL ?? "", key);
  expect(again.ok, JSON.stringify(again)).toBe(true);
  await context.close();
});
