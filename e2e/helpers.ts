import { type Browser, type BrowserContext, expect, type Page } from "@playwright/test";

export const SETUP_TOKEN = "e2e-setup-token-0123456789";
export const ADMIN = { username: "alice", displayName: "Alice Admin", password: "correct-horse-battery" };

/** Sign in through the form, as a person would. */
export async function signIn(page: Page, username: string, password: string) {
  await page.goto("/signin");
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
}

/** Creates the first admin through the setup link once per database; later calls just sign in. */
export async function adminContext(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`/setup?token=${SETUP_TOKEN}`);
  if (await page.getByRole("heading", { name: "Create the first admin" }).isVisible()) {
    if (await page.getByLabel("Username").isVisible()) {
      await page.getByLabel("Username").fill(ADMIN.username);
      await page.getByLabel("Display name").fill(ADMIN.displayName);
      await page.getByLabel("Password").fill(ADMIN.password);
      await page.getByRole("button", { name: "Create admin and sign in" }).click();
      await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
      return { context, page };
    }
  }
  await signIn(page, ADMIN.username, ADMIN.password);
  return { context, page };
}

export async function screenshot(page: Page, name: string) {
  await page.screenshot({ path: `test-results/screens/${name}.png`, fullPage: true });
}

/** Relative luminance (0 black … 1 white) of an element's computed background colour. */
async function backgroundLuminance(page: Page, selector: string): Promise<number> {
  return page.locator(selector).evaluate((el) => {
    const [r, g, b] = (getComputedStyle(el).backgroundColor.match(/\d+(\.\d+)?/g) ?? ["0", "0", "0"])
      .slice(0, 3)
      .map((c) => {
        const v = Number(c) / 255;
        return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
      }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  });
}

/** The page is in the given theme: the attribute is set, the choice is kept, and the page looks it. */
export async function expectTheme(page: Page, theme: "light" | "dark") {
  await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
  expect(await page.evaluate(() => localStorage.getItem("toolstore-theme"))).toBe(theme);
  const luminance = await backgroundLuminance(page, "body");
  if (theme === "dark") expect(luminance).toBeLessThan(0.1);
  else expect(luminance).toBeGreaterThan(0.6);
}
