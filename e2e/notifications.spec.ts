import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type BrowserContext, expect, type Page, test } from "@playwright/test";
import { makePng } from "../server/core/testing/png";
import { ADMIN, adminContext, screenshot } from "./helpers";

/**
 * Told on the phone: at 390 × 844 an approver turns notifications on (a signed webhook added in
 * Settings → Notifications, tested with "Send a test"), an MCP client's write waits, the
 * delivered message's link opens the card — through sign-in on a fresh phone, then back to the
 * card — one tap on Allow once, and the client gets its result.
 */
test.describe.configure({ mode: "serial" });

const SECRET = "e2e-webhook-secret-0123456789";
const PHONE = { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true } as const;

interface Hit {
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: { type: string; url: string; title: string; approvals: { id: string; capability: string }[] };
}

let admin: { context: BrowserContext; page: Page };
let client: Client;
let server: http.Server;
let hookUrl = "";
const hits: Hit[] = [];

test.beforeAll(async ({ browser, baseURL }) => {
  server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => {
      raw += c.toString("utf8");
    });
    req.on("end", () => {
      hits.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/toolstore-hook`;

  admin = await adminContext(browser);
  const key = await admin.page.evaluate(async () => {
    const res = await fetch("/api/trpc/apiKeys.create", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ name: "e2e-notify-agent", mode: "default", modules: ["*"] }),
    });
    return (await res.json()).result.data.key as string;
  });
  client = new Client({ name: "notify-phone-agent", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/api/mcp", baseURL), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
});

test.afterAll(async () => {
  await client?.close();
  await admin?.context.close();
  await new Promise<void>((r) => server?.close(() => r()));
});

function verified(hit: Hit): boolean {
  const t = String(hit.headers["x-toolstore-timestamp"]);
  const mac = createHmac("sha256", SECRET).update(`${t}.${hit.raw}`).digest("hex");
  return hit.headers["x-toolstore-signature"] === `v1=${mac}`;
}

test("[NOTIFICATIONS]: at 390 px, a webhook's link opens the card, Allow works and the MCP client gets its result", async ({
  browser,
}) => {
  const phone = await browser.newContext({ ...PHONE, storageState: await admin.context.storageState() });
  const page = await phone.newPage();
  await page.goto("/settings/notifications");
  await expect(page.getByRole("heading", { name: "Notifications", level: 1 })).toBeVisible();
  await expect(page.getByText("No channels yet")).toBeVisible();
  await screenshot(page, "h25-mobile-notifications-empty");

  // Turn notifications on: a signed JSON webhook to the local receiver.
  const form = page.getByRole("form", { name: "Add a webhook" });
  await form.getByLabel("Webhook URL").fill(hookUrl);
  await form.getByLabel("Signing secret").fill(SECRET);
  await form.getByLabel("Name").fill("phone relay");
  await form.getByRole("button", { name: "Add webhook" }).click();
  const channel = page.getByTestId("notification-channel").filter({ hasText: "phone relay" });
  await expect(channel).toContainText("signed");
  await channel.getByRole("button", { name: "Send a test" }).click();
  await expect(channel.getByRole("status")).toHaveText("Test sent.");
  expect(hits.at(-1)?.body.type).toBe("approval.test");
  expect(verified(hits.at(-1) as Hit)).toBe(true);
  await expect(channel.getByTestId("channel-health")).toContainText("last sent");
  await screenshot(page, "h25-mobile-notifications-on");
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(wide).toBeLessThanOrEqual(390);

  // An MCP client's write waits for a human.
  const picture = makePng(8, 8, () => [200, 60, 40]).toString("base64");
  const code = `import { save } from "toolstore/assets";
export default async () => { const a = await save({ name: "told-on-phone", data_base64: "${picture}" }); return { width: a.width }; };`;
  const call = client.callTool({ name: "execute_code", arguments: { code, title: "notify me" } }, undefined, {
    timeout: 120_000,
  });
  await expect
    .poll(() => hits.filter((h) => h.body.type === "approval.request").length, { timeout: 10_000 })
    .toBe(1);
  const message = hits.find((h) => h.body.type === "approval.request") as Hit;
  expect(verified(message)).toBe(true);
  expect(message.body.approvals[0]?.capability).toBe("assets.save");
  const link = message.body.url;
  expect(link).toMatch(/\/approvals\/[\w-]+$/);

  // A phone that is not signed in: the link goes through sign-in and comes back to the card.
  const fresh = await browser.newContext(PHONE);
  const tab = await fresh.newPage();
  await tab.goto(link);
  await expect(tab).toHaveURL(/\/signin\?next=%2Fapprovals%2F/);
  await tab.getByLabel("Username").fill(ADMIN.username);
  await tab.getByLabel("Password").fill(ADMIN.password);
  await tab.getByRole("button", { name: "Sign in" }).click();
  await expect(tab).toHaveURL(link);
  const card = tab.getByTestId("approval-card");
  await expect(card).toContainText("assets.save");
  await expect(card).toContainText('key "e2e-notify-agent"');
  await screenshot(tab, "h25-mobile-card-from-link");
  await card.getByRole("button", { name: /Allow once/ }).tap();
  await expect(tab.getByTestId("approval-status")).toHaveText("Allowed once");
  await screenshot(tab, "h25-mobile-card-allowed");

  const result = (await call) as unknown as { structuredContent: { ok: boolean; result: unknown } };
  expect(result.structuredContent).toMatchObject({ ok: true, result: { width: 8 } });
  await fresh.close();
  await phone.close();
});

test("[NOTIFICATIONS]: the settings page at desktop width", async () => {
  const page = admin.page;
  await page.goto("/settings/notifications");
  await expect(page.getByTestId("notification-channel")).toHaveCount(1);
  await expect(page.getByRole("table", { name: "Recent deliveries" })).toContainText("sent");
  await screenshot(page, "h25-desktop-notifications");
  await expect(page.locator('link[rel="manifest"]')).toHaveAttribute("href", "/manifest.webmanifest");
  const manifest = await (await page.request.get("/manifest.webmanifest")).json();
  expect(manifest).toMatchObject({
    display: "standalone",
    icons: expect.arrayContaining([expect.objectContaining({ sizes: "512x512" })]),
  });
  expect((await page.request.get("/sw.js")).status()).toBe(200);
});
