import fs from "node:fs";
import http from "node:http";
import { expect, test } from "@playwright/test";
import { E2E_PORT } from "../playwright.config";
import { ADMIN, adminContext, screenshot } from "./helpers";

/** A raw request with chosen Host and forwarding headers (a browser cannot forge them). */
function rawRequest(
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; setCookie: string[] }> {
  return new Promise((resolve, reject) => {
    const method = body === undefined ? "GET" : "POST";
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const sent = payload ? { ...headers, "content-type": "application/json" } : headers;
    const req = http.request({ host: "127.0.0.1", port: E2E_PORT, path, method, headers: sent }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, setCookie: res.headers["set-cookie"] ?? [] });
    });
    req.on("error", reject);
    req.end(payload);
  });
}

async function rawGet(path: string, headers: Record<string, string>): Promise<number> {
  return (await rawRequest(path, headers)).status;
}

test("[HOSTS]: the console refuses a foreign Host (DNS rebinding) on pages and APIs, and serves its own", async () => {
  expect(await rawGet("/signin", { host: `evil.example:${E2E_PORT}` })).toBe(403);
  expect(await rawGet("/api/trpc/auth.me", { host: `evil.example:${E2E_PORT}` })).toBe(403);
  expect(
    await rawGet("/api/mcp", { host: `evil.example:${E2E_PORT}`, origin: `http://evil.example:${E2E_PORT}` }),
  ).toBe(403);
  expect(await rawGet("/signin", { host: `127.0.0.1:${E2E_PORT}`, "x-forwarded-host": "evil.example" })).toBe(
    200,
  );
  expect(await rawGet("/signin", { host: `localhost:${E2E_PORT}` })).toBe(200);
});

test("[HOSTS]: without TOOLSTORE_TRUST_PROXY a client's X-Forwarded-Proto: https counts for nothing", async ({
  browser,
}) => {
  const self = { host: `127.0.0.1:${E2E_PORT}` };
  const httpsOrigin = { ...self, origin: `https://127.0.0.1:${E2E_PORT}` };
  expect(await rawGet("/signin", httpsOrigin)).toBe(403);
  expect(await rawGet("/signin", { ...httpsOrigin, "x-forwarded-proto": "https" })).toBe(403);
  expect(await rawGet("/signin", { ...self, origin: `http://127.0.0.1:${E2E_PORT}` })).toBe(200);

  const { context } = await adminContext(browser);
  await context.close();
  const signedIn = await rawRequest(
    "/api/trpc/auth.signIn",
    { ...self, "x-toolstore-csrf": "1", "x-forwarded-proto": "https" },
    { username: ADMIN.username, password: ADMIN.password },
  );
  expect(signedIn.status).toBe(200);
  expect(signedIn.setCookie.join("\n")).toContain("toolstore_session=");
  expect(signedIn.setCookie.join("\n")).not.toContain("Secure");
});

test("[AUDIT]: revoking a key shows on the Audit page with who, before and after; export gives JSON lines", async ({
  browser,
}) => {
  const { context, page } = await adminContext(browser);
  await page.goto("/keys");
  await page.getByLabel(/^Name/).fill("audited-key");
  await page.getByRole("button", { name: "Create key" }).click();
  await expect(page.getByTestId("fresh-key")).toBeVisible();
  await page.getByRole("button", { name: "I have copied it — hide the key" }).click();
  await page.getByRole("button", { name: "Revoke audited-key" }).click();
  await page.getByRole("button", { name: "Revoke now" }).click();
  await expect(page.getByTestId("key-audited-key")).toContainText("revoked");

  await page.getByRole("link", { name: "Audit" }).click();
  await expect(page.getByRole("heading", { name: "Audit" })).toBeVisible();
  const row = page.getByRole("row").filter({ hasText: "apiKeys.revoke" }).first();
  await expect(row).toContainText("alice");
  await row.getByText("before / after").click();
  await expect(row).toContainText("Before");
  await expect(row).toContainText("revokedAt");
  await expect(page.getByRole("row").filter({ hasText: "apiKeys.create" }).first()).toBeVisible();

  await page.getByLabel("Action").fill("apiKeys.revoke");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page.getByRole("row").filter({ hasText: "apiKeys.create" })).toHaveCount(0);
  await expect(page.getByRole("row").filter({ hasText: "apiKeys.revoke" })).toHaveCount(1);
  await screenshot(page, "audit-desktop");
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, "audit-390");
  await page.setViewportSize({ width: 1280, height: 800 });

  const downloading = page.waitForEvent("download");
  await page.getByRole("link", { name: "Export JSON lines" }).click();
  const download = await downloading;
  const lines = fs
    .readFileSync((await download.path()) as string, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { action: string; actorName: string; hash: string; prevHash: string });
  // The filtered entries, then the whole chain's head (with the signed checkpoint once one is written).
  expect(lines.pop()).toMatchObject({ type: "audit-head", seq: expect.any(Number) });
  expect(lines.map((l) => l.action)).toEqual(["apiKeys.revoke"]);
  expect(lines[0]).toMatchObject({ actorName: "alice", hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  await context.close();
});
