import { expect, test } from "@playwright/test";
import { ADMIN, adminContext, SETUP_TOKEN, screenshot, signIn } from "./helpers";

test.describe.configure({ mode: "serial" });

test("[AUTH]: a fresh database sends visitors to the setup page", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/setup$/);
  await expect(page.getByText("Open the one-time setup link")).toBeVisible();
  await screenshot(page, "setup-notice");
});

test("[AUTH]: the setup link creates the admin, who lands on the dashboard", async ({ browser }) => {
  const { page, context } = await adminContext(browser);
  await expect(page.getByTestId("whoami")).toContainText(ADMIN.displayName);
  await expect(page.getByTestId("whoami")).toContainText("admin");
  await screenshot(page, "dashboard");
  await context.close();
});

test("[AUTH]: the setup link works once only", async ({ page }) => {
  await page.goto(`/setup?token=${SETUP_TOKEN}`);
  await expect(page).toHaveURL(/\/signin$/);
});

test("[AUTH]: a wrong password is refused with its code", async ({ page }) => {
  await page.goto("/signin");
  await page.getByLabel("Username").fill(ADMIN.username);
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "UNAUTHENTICATED" })).toContainText(
    "Wrong username or password",
  );
  await screenshot(page, "signin-error");
});

test("[ROLES]: a viewer cannot reach an admin action", async ({ browser }) => {
  const admin = await adminContext(browser);
  await admin.page.goto("/settings/users");
  await admin.page.getByLabel("Username").fill("victor");
  await admin.page.getByLabel("Display name").fill("Victor Viewer");
  await admin.page.getByLabel("Initial password").fill("viewer-password-1");
  await admin.page.getByRole("button", { name: "Add user" }).click();
  await expect(admin.page.getByRole("cell", { name: "victor", exact: true })).toBeVisible();
  await screenshot(admin.page, "users");
  await admin.context.close();

  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, "victor", "viewer-password-1");
  await expect(page.getByRole("link", { name: "Users" })).toHaveCount(0);
  await page.goto("/settings/users");
  await expect(page.getByRole("alert").filter({ hasText: "FORBIDDEN" })).toContainText(
    "needs the admin role",
  );
  // The procedure checks the role too, not only the page.
  const status = await page.evaluate(async () => {
    const res = await fetch("/api/trpc/users.create", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({
        username: "mallory",
        displayName: "M",
        role: "admin",
        password: "0123456789ab",
      }),
    });
    return res.status;
  });
  expect(status).toBe(403);
  await context.close();
});

test("[CSRF]: a mutation without the console's header is refused", async ({ browser }) => {
  const { page, context } = await adminContext(browser);
  const status = await page.evaluate(async () => {
    const res = await fetch("/api/trpc/events.announce", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "forged" }),
    });
    return res.status;
  });
  expect(status).toBe(403);
  await context.close();
});

test("[LIVE]: an event published elsewhere reaches an open page over SSE", async ({ browser }) => {
  const watcher = await adminContext(browser);
  await expect(watcher.page.getByTestId("live-status")).toContainText("live");
  const actor = await adminContext(browser);
  const text = `hello from another tab ${Date.now()}`;
  const ok = await actor.page.evaluate(async (t) => {
    const res = await fetch("/api/trpc/events.announce", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ text: t }),
    });
    return res.ok;
  }, text);
  expect(ok).toBe(true);
  await expect(watcher.page.getByTestId("live-feed")).toContainText(text, { timeout: 5_000 });
  await screenshot(watcher.page, "dashboard-live");
  await watcher.context.close();
  await actor.context.close();
});
