/**
 * An MCP client that connects by URL and signs in: the SDK's own client OAuth support (`auth()`
 * with an OAuthClientProvider) against the started ToolStore, the consent page answered in
 * Chromium, then execute_code with the grant; the Keys page lists the grant and revokes it.
 */
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { expect, type Page, test } from "@playwright/test";
import { ADMIN, adminContext, screenshot } from "./helpers";

const REDIRECT = "http://127.0.0.1:9/oauth-callback";

class BrowserProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  constructor(readonly name: string) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.name, redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The browser lands on the client's redirect URI; the page records where it was sent. */
async function catchRedirect(page: Page): Promise<() => URL> {
  let landed: URL | undefined;
  await page.route(`${REDIRECT}**`, (route) => {
    landed = new URL(route.request().url());
    return route.fulfill({
      status: 200,
      contentType: "text/html",
      body: "<h1>Signed in, back to the client</h1>",
    });
  });
  return () => {
    if (!landed) throw new Error("the browser was not sent to the redirect URI");
    return landed;
  };
}

async function execute(client: Client, code: string) {
  const r = (await client.callTool({ name: "execute_code", arguments: { code } }, undefined, {
    timeout: 60_000,
  })) as {
    structuredContent?: { ok: boolean; result?: unknown; error?: { kind: string } };
  };
  return r.structuredContent;
}

const EVALUATE = `import { evaluate } from "toolstore/calculator";
export default async function () { return (await evaluate({ expression: "6 * 7" })).value; }`;
const WEATHER = `import { get_weather } from "toolstore/weather";
export default async function () { return await get_weather({ location: "Oslo" }); }`;

test("[OAUTH]: a client signs in through the consent page, runs execute_code with the grant, and is revoked in the console", async ({
  browser,
  baseURL,
}) => {
  const serverUrl = new URL("/api/mcp", baseURL);
  const provider = new BrowserProvider("E2E Connector");
  expect(await auth(provider, { serverUrl })).toBe("REDIRECT");
  expect(provider.info?.client_id).toMatch(/^tsc_/);

  // Signed out, the consent page sends the user to sign in first and then back.
  const context = await browser.newContext();
  const page = await context.newPage();
  const landed = await catchRedirect(page);
  await page.goto(String(provider.authorizationUrl));
  await expect(page).toHaveURL(/\/signin\?next=/);
  await page.getByLabel("Username").fill(ADMIN.username);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Allow E2E Connector to use ToolStore?" })).toBeVisible();
  await expect(page.getByText(REDIRECT)).toBeVisible();
  await screenshot(page, "oauth-consent");
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, "oauth-consent-390");
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.getByRole("radio", { name: /^default/ }).check();
  await page.getByRole("radio", { name: "Only these:" }).check();
  await page
    .getByRole("group", { name: "Modules to mount" })
    .getByRole("checkbox", { name: "calculator" })
    .check();
  await page.getByRole("button", { name: "Allow" }).click();
  await expect(page.getByRole("heading", { name: "Signed in, back to the client" })).toBeVisible();
  const back = landed();
  expect(back.searchParams.get("iss")).toBe(new URL(String(baseURL)).origin);
  expect(await auth(provider, { serverUrl, authorizationCode: back.searchParams.get("code") ?? "" })).toBe(
    "AUTHORIZED",
  );

  const client = new Client({ name: "e2e-connector", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
  expect(await execute(client, EVALUATE)).toMatchObject({ ok: true, result: 42 });
  expect(await execute(client, WEATHER)).toMatchObject({ ok: false, error: { kind: "refused" } });

  const admin = await adminContext(browser);
  await admin.page.goto("/keys");
  const row = admin.page.getByTestId("grant-E2E Connector");
  await expect(row).toContainText("alice");
  await expect(row).toContainText("default");
  await expect(row).toContainText("calculator");
  await screenshot(admin.page, "oauth-keys");
  await admin.page.setViewportSize({ width: 390, height: 844 });
  await screenshot(admin.page, "oauth-keys-390");
  await admin.page.setViewportSize({ width: 1280, height: 800 });
  await row.getByRole("button", { name: "Revoke E2E Connector" }).click();
  await row.getByRole("button", { name: "Revoke now" }).click();
  await expect(row).toContainText("revoked");
  await expect(execute(client, EVALUATE)).rejects.toThrow();
  await client.close().catch(() => {});
  await admin.context.close();
  await context.close();
});

test("[OAUTH]: denying on the consent page sends the client access_denied", async ({ browser, baseURL }) => {
  const serverUrl = new URL("/api/mcp", baseURL);
  const provider = new BrowserProvider("Denied Connector");
  expect(await auth(provider, { serverUrl })).toBe("REDIRECT");
  const { page, context } = await adminContext(browser);
  const landed = await catchRedirect(page);
  await page.goto(String(provider.authorizationUrl));
  await page.getByRole("button", { name: "Deny" }).click();
  await expect(page.getByRole("heading", { name: "Signed in, back to the client" })).toBeVisible();
  expect(landed().searchParams.get("error")).toBe("access_denied");
  // A request with a changed redirect URI is shown as an error, not sent anywhere.
  const tampered = new URL(String(provider.authorizationUrl));
  tampered.searchParams.set("redirect_uri", "https://evil.example/cb");
  await page.goto(String(tampered));
  await expect(page.getByRole("heading", { name: "This sign-in link does not work" })).toBeVisible();
  await expect(page.locator(".error-box")).toContainText("not one that Denied Connector registered");
  await context.close();
});
