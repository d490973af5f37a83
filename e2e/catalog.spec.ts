import { type Browser, expect, type Page, test } from "@playwright/test";
import { adminContext, expectTheme, screenshot, signIn } from "./helpers";

/**
 * Toolsets, Capabilities, Rules and API keys pages, as an admin would use them; a viewer reads
 * but cannot change. Runs on a fresh database (its own port), so it starts with no toolsets.
 */
test.describe.configure({ mode: "serial" });

async function asAdmin(browser: Browser): Promise<Page> {
  return (await adminContext(browser)).page;
}

test("[TOOLSETS]: an empty store says what to do; Sync publishes the examples", async ({ browser }) => {
  const page = await asAdmin(browser);
  await page.getByRole("link", { name: "Toolsets", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Toolsets", level: 1 })).toBeVisible();
  const empty = page.getByText("No toolsets yet");
  if (await empty.isVisible()) {
    await expect(page.getByText("npm run toolstore -- publish-toolset toolsets/calculator")).toBeVisible();
    await screenshot(page, "toolsets-empty");
  }
  await expect(page.getByText("Loading toolsets…")).toHaveCount(0);
  await page.getByRole("button", { name: "Sync from folder" }).click();
  // Sync type-checks every folder; on a loaded 2-core machine that takes a while.
  await expect(page.getByRole("status")).toContainText("toolsets from", { timeout: 60_000 });
  const list = page.getByRole("list", { name: "Toolsets" });
  await expect(list.getByRole("link", { name: /calculator/ })).toBeVisible();
  await expect(list.getByRole("link", { name: /weather/ })).toBeVisible();
  await page.getByLabel("Search toolsets").fill("calc");
  await expect(list.getByRole("link")).toHaveCount(1);
  await page.getByLabel("Search toolsets").fill("");
  await screenshot(page, "toolsets-list");
});

test("[TOOLSETS]: the detail page renders doc.md, bindings with parameters, versions and code", async ({
  browser,
}) => {
  const page = await asAdmin(browser);
  await page.goto("/toolsets/calculator");
  await expect(page.getByRole("heading", { name: /calculator/, level: 1 })).toBeVisible();
  const evaluate = page.getByTestId("binding-evaluate");
  await expect(evaluate).toContainText("expression: string");
  await expect(evaluate).toContainText("precision?: number");
  await expect(evaluate.locator(".cat-read")).toBeVisible();
  await expect(page.getByTestId("toolset-doc").getByRole("heading").first()).toBeVisible();
  // It comes from toolsets/calculator, so it can be published again from there.
  await expect(page.getByRole("button", { name: "Publish from folder" })).toBeVisible();
  await screenshot(page, "toolset-detail");

  // Keyboard: arrow keys move between the tabs.
  await page.getByRole("tab", { name: "Overview" }).focus();
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  await expect(page.getByRole("tab", { name: /Versions/ })).toBeFocused();
  await expect(page.getByTestId("version-1")).toContainText("folder sync");
  await page.getByRole("tab", { name: "Code" }).click();
  await expect(page.getByText("export function evaluate(")).toBeVisible();
});

const GREETER_DOC = "# greeter\n\nSays hello. Call `greet({ name })`.\n";
const greeterSource = (category: string, extra = "") => `/**
 * Friendly greetings, for trying out the console.
 */

/**
 * Greets someone by name.
 * @tool ${category}
 * @param name Who to greet
 * @param excited End with an exclamation mark
 */
export function greet(name: string, excited = false): string {
  return \`Hello, \${name}\${excited ? "!" : "."}\`;
}
${extra}`;
const FAREWELL = `
/**
 * Says goodbye.
 * @tool read
 * @param name Who leaves
 */
export function farewell(name: string): string {
  return \`Goodbye, \${name}.\`;
}
`;

test("[TOOLSETS]: an upload publishes v1, a second upload v2 with its differences", async ({ browser }) => {
  const page = await asAdmin(browser);
  await page.goto("/toolsets");
  await page.getByRole("button", { name: "Upload…" }).click();
  await page.getByLabel(/^Name/).fill("greeter");
  await page.getByLabel("doc.md text").fill(GREETER_DOC);
  await page.getByLabel("toolset.ts text").fill("export function broken( {");
  await page.getByRole("button", { name: "Validate and publish" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "TOOLSET_INVALID" })).toContainText("toolset.ts");
  await page.getByLabel("toolset.ts text").fill(greeterSource("read"));
  await page.getByRole("button", { name: "Validate and publish" }).click();
  await expect(page.getByRole("status").filter({ hasText: "published greeter v1" })).toBeVisible();
  await page.getByRole("link", { name: "Open greeter" }).click();
  await expect(page.getByTestId("binding-greet")).toContainText("excited?: boolean");
  await expect(page.getByTestId("binding-greet")).toContainText("= false");
  // An uploaded toolset has no folder to publish from.
  await expect(page.getByRole("button", { name: "Upload new version…" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Publish from folder" })).toHaveCount(0);

  await page.getByRole("button", { name: "Upload new version…" }).click();
  await page.getByLabel("doc.md text").fill(GREETER_DOC);
  await page.getByLabel("toolset.ts text").fill(greeterSource("write", FAREWELL));
  await page.getByRole("button", { name: "Validate and publish" }).click();
  await expect(page.getByRole("status").filter({ hasText: "published greeter v2" })).toContainText(
    "category change waits for an admin",
  );
  await page.getByRole("tab", { name: /Versions/ }).click();
  const v2 = page.getByTestId("version-2");
  await expect(v2).toContainText("upload by alice");
  await expect(v2.getByRole("region", { name: "Changes from v1 to v2" })).toContainText("+ farewell [read]");
  await expect(v2.getByRole("region", { name: "Changes from v1 to v2" })).toContainText(
    "greet category: read -> write",
  );
  await screenshot(page, "toolset-versions");

  // The declared category waits for an admin on the Capabilities page, in the one review queue too.
  await page.goto("/capabilities");
  const queued = page.getByRole("region", { name: /Waiting for a category/ }).getByRole("listitem", {
    name: "greeter.greet",
  });
  await expect(queued).toContainText("toolsets");
  await expect(queued).toContainText("the new version declares write");
  await page.getByRole("button", { name: /^pending/ }).click();
  const greet = page.getByTestId("cap-greeter.greet");
  await expect(greet).toContainText("new version declares");
  await screenshot(page, "capabilities-pending");
  await greet.getByRole("button", { name: "Accept write" }).click();
  await expect(greet).toHaveCount(0); // the pending filter no longer lists it
  await expect(queued).toHaveCount(0);
  await page.getByRole("button", { name: /^All/ }).click();
  await expect(page.getByTestId("cap-greeter.greet").locator(".cat-write")).toBeVisible();
});

test("[TOOLSETS]: Try it runs a read binding through the gate from a schema form", async ({ browser }) => {
  const page = await asAdmin(browser);
  await page.goto("/toolsets/calculator#try");
  await expect(page.getByRole("tab", { name: "Try it" })).toHaveAttribute("aria-selected", "true");
  await page.getByLabel(/^expression/).fill("2 * (3 + 4)");
  await page.getByRole("button", { name: /^Run/ }).click();
  const result = page.getByTestId("try-result");
  await expect(result).toContainText("allow");
  await expect(result).toContainText("read capabilities run without approval");
  await expect(result).toContainText("14");
  await screenshot(page, "toolset-try-it");

  // Keyboard: Ctrl+Enter runs; a bad expression comes back as an error with its code.
  await page.getByLabel(/^expression/).fill("2 +");
  await page.getByLabel(/^expression/).press("Control+Enter");
  await expect(result).toContainText("CAPABILITY_FAILED");
});

test("[TOOLSETS]: Try it on a write binding is blocked in plan mode and waits for approval in default mode", async ({
  browser,
}) => {
  const page = await asAdmin(browser);
  await page.goto("/toolsets/webhook#try");
  await page.getByLabel(/^event/).fill("build.requested");
  await page.getByLabel("Mode").selectOption("plan");
  await page.getByRole("button", { name: /^Run/ }).click();
  const result = page.getByTestId("try-result");
  await expect(result).toContainText("blocked");
  await expect(result).toContainText("GATE_BLOCKED_PLAN");

  await page.getByLabel("Mode").selectOption("default");
  await page.getByRole("button", { name: /^Run/ }).click();
  await expect(page.getByTestId("try-waiting")).toContainText("Waiting for approval");
  await expect(page.getByTestId("try-waiting")).toContainText(/expires in \d:\d\d/);
  await screenshot(page, "toolset-try-waiting");

  // Leaving the page cancels the Try it, and its request expires; should it still be waiting, deny
  // it, so no request of this test is left in the queue the later specs work in.
  await page.goto("/approvals");
  const card = page.getByTestId("approval-card").filter({ hasText: "webhook.send" });
  await expect(async () => {
    if ((await card.count()) > 0)
      await card.first().getByRole("button", { name: "Deny" }).click({ timeout: 2_000 });
    await expect(card).toHaveCount(0, { timeout: 2_000 });
  }).toPass({ timeout: 20_000 });
});

test("[TOOLSETS]: a secret is masked and never sent back to the browser", async ({ browser }) => {
  const page = await asAdmin(browser);
  const secret = "hook-secret-value-9d1f";
  const bodies: string[] = [];
  page.on("response", async (res) => {
    if (res.url().includes("/api/trpc/") && res.request().method() === "GET") {
      bodies.push(await res.text().catch(() => ""));
    }
  });
  await page.goto("/toolsets/webhook#settings");
  const row = page.getByTestId("env-WEBHOOK_TOKEN");
  await expect(row).toContainText("secret");
  await row.getByRole("button", { name: "Set WEBHOOK_TOKEN" }).click();
  await row.getByLabel("New value of WEBHOOK_TOKEN").fill(secret);
  await row.getByRole("button", { name: "Save" }).click();
  await expect(row).toContainText("••••••••");
  await page.reload();
  await expect(page.getByTestId("env-WEBHOOK_TOKEN")).toContainText("••••••••");
  expect(await page.content()).not.toContain(secret);
  expect(bodies.join("\n")).not.toContain(secret);
  await page.getByLabel(/Allowed hosts/).fill("hooks.example.com");
  await page.getByRole("button", { name: "Save limits" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Saved." })).toBeVisible();
  await screenshot(page, "toolset-settings");
});

test("[CAPABILITIES]: a category change with a reason appears in its history", async ({ browser }) => {
  const page = await asAdmin(browser);
  await page.getByRole("link", { name: "Capabilities", exact: true }).click();
  const row = page.getByTestId("cap-calculator.statistics");
  await expect(row.locator(".cat-read")).toBeVisible();
  await row.getByRole("button", { name: "Change category of calculator.statistics" }).click();
  const form = page.getByRole("form", { name: "Change the category of calculator.statistics" });
  await form.getByLabel("New category").selectOption("write");
  await form.getByLabel(/Reason/).fill("it stores the numbers it summarises");
  await form.getByRole("button", { name: "Save category" }).click();
  await expect(row.locator(".cat-write")).toBeVisible();
  const history = page.getByRole("region", { name: "History of calculator.statistics" });
  const latest = history.getByTestId("category-change").first();
  await expect(latest).toContainText("read");
  await expect(latest).toContainText("write");
  await expect(latest).toContainText("alice");
  await expect(latest).toContainText("it stores the numbers it summarises");
  await expect(
    page
      .getByRole("complementary")
      .getByTestId("category-change")
      .filter({ hasText: "calculator.statistics" })
      .first(),
  ).toContainText("it stores the numbers");
  await screenshot(page, "capabilities");
});

test("[RULES]: a rule with an argument condition decides a tested call, and says why", async ({
  browser,
}) => {
  const page = await asAdmin(browser);
  await page.goto("/rules");
  await expect(page.getByText("No rules yet")).toBeVisible();
  await page.getByRole("combobox", { name: /^Effect/ }).selectOption("allow");
  await page.getByLabel(/Capability pattern/).fill("webhook.*");
  await page.getByLabel(/Description/).fill("build hooks");
  await page.getByRole("button", { name: "+ Add condition" }).click();
  await page.getByLabel("Argument path 1").fill("event");
  await page.getByLabel("Operator 1").selectOption("startsWith");
  await page.getByLabel("Value 1").fill("build.");
  // Before saving: what the draft would have decided over the recorded calls. The Try it of
  // webhook.send above (event "build.requested", default mode) asked; this rule would allow it.
  await page.getByRole("button", { name: "What would this change?" }).click();
  const whatIf = page.getByTestId("what-if");
  await expect(whatIf.getByTestId("what-if-changed")).toContainText(/\d+ decisions? would change/);
  await expect(
    whatIf.getByTestId("what-if-change").filter({ hasText: "webhook.send" }).first(),
  ).toContainText("ask → allow");
  await screenshot(page, "rules-what-if");
  await page.getByRole("button", { name: "Add rule" }).click();
  await expect(page.getByTestId("rule-row")).toContainText("webhook.*");
  await expect(page.getByTestId("rule-row")).toContainText('starts with "build."');

  const test = page.getByRole("form", { name: "Sample call" });
  await test.getByLabel("Capability").selectOption("webhook.send");
  await test.getByLabel("Mode").selectOption("default");
  // The sample arguments come from the capability's schema.
  await expect(test.getByLabel(/Arguments/)).toHaveValue(/"event": ""/);
  await test.getByLabel(/Arguments/).fill('{ "event": "build.requested" }');
  await test.getByRole("button", { name: "Test call" }).click();
  const result = page.getByTestId("test-result");
  await expect(result.locator(".decision")).toContainText("allow");
  await expect(result.locator(".decision")).toContainText('allowed by rule "build hooks"');

  await test.getByLabel(/Arguments/).fill('{ "event": "deploy.now" }');
  await test.getByLabel(/Arguments/).press("Control+Enter");
  await expect(result.locator(".decision")).toContainText("ask");
  await expect(result.locator(".decision")).toContainText("write capabilities need approval in default mode");
  await expect(result.getByRole("listitem").filter({ hasText: "no grant" })).toBeVisible();
  await screenshot(page, "rules");

  // Disabling the rule takes it out of the evaluation.
  await page.getByLabel("Rule webhook.* enabled").uncheck();
  await test.getByLabel(/Arguments/).fill('{ "event": "build.requested" }');
  await test.getByRole("button", { name: "Test call" }).click();
  await expect(result.locator(".decision")).toContainText("ask");
});

test("[RULES]: plan mode blocks, and the default mode is kept", async ({ browser }) => {
  const page = await asAdmin(browser);
  await page.goto("/rules");
  await page.getByRole("radio", { name: /^plan/ }).check();
  await page.reload();
  await expect(page.getByRole("radio", { name: /^plan/ })).toBeChecked();
  const test = page.getByRole("form", { name: "Sample call" });
  await test.getByLabel("Capability").selectOption("webhook.send");
  await expect(test.getByLabel("Mode")).toHaveValue("plan");
  await test.getByRole("button", { name: "Test call" }).click();
  await expect(page.getByTestId("test-result").locator(".decision")).toContainText("blocked");
  await page.getByRole("radio", { name: /^default/ }).check();
  await expect(page.getByRole("radio", { name: /^default/ })).toBeChecked();
});

test("[KEYS]: a key is shown once with ready-to-paste snippets, then revoked", async ({ browser }) => {
  const page = await asAdmin(browser);
  await page.getByRole("link", { name: "API keys", exact: true }).click();
  // The list has loaded: its empty state, or keys another spec (the audit trail) made before.
  await expect(
    page.getByText("No API keys yet").or(page.locator('[data-testid^="key-"]').first()),
  ).toBeVisible();
  await page.getByLabel(/^Name/).fill("laptop-claude");
  await page.getByLabel("Mode").selectOption("plan");
  await page.getByRole("radio", { name: "Only these:" }).check();
  await page.getByRole("checkbox", { name: "calculator" }).check();
  await page.getByRole("button", { name: "Create key" }).click();

  const fresh = page.getByTestId("fresh-key");
  const key = (await fresh.getByTestId("new-key").textContent()) ?? "";
  expect(key).toMatch(/^tsk_/);
  await expect(fresh.getByTestId("snippet-http")).toContainText(`"Authorization": "Bearer ${key}"`);
  await expect(fresh.getByTestId("snippet-http")).toContainText("/api/mcp");
  await fresh.getByRole("tab", { name: "stdio command" }).click();
  await expect(fresh.getByTestId("snippet-stdio")).toContainText(
    `TOOLSTORE_API_KEY=${key} npm run toolstore -- mcp`,
  );
  const row = page.getByTestId("key-laptop-claude");
  await expect(row).toContainText("plan");
  await expect(row).toContainText("calculator");
  await screenshot(page, "keys-created");

  // Shown once: after a reload the key is nowhere on the page.
  await page.reload();
  await expect(page.getByTestId("key-laptop-claude")).toBeVisible();
  expect(await page.content()).not.toContain(key);

  await page.getByRole("button", { name: "Revoke laptop-claude" }).click();
  await page.getByRole("button", { name: "Revoke now" }).click();
  await expect(page.getByTestId("key-laptop-claude")).toContainText("revoked");
  await screenshot(page, "keys");
});

test("[ROLES]: a viewer reads toolsets, capabilities and rules but changes nothing", async ({ browser }) => {
  const admin = await asAdmin(browser);
  await admin.goto("/settings/users");
  if (!(await admin.getByRole("cell", { name: "vera", exact: true }).isVisible())) {
    await admin.getByLabel("Username").fill("vera");
    await admin.getByLabel("Display name").fill("Vera Viewer");
    await admin.getByLabel("Initial password").fill("viewer-password-2");
    await admin.getByRole("button", { name: "Add user" }).click();
    await expect(admin.getByRole("cell", { name: "vera", exact: true })).toBeVisible();
  }
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, "vera", "viewer-password-2");
  await page.goto("/toolsets");
  await expect(page.getByRole("link", { name: /calculator/ })).toBeVisible();
  await expect(page.getByRole("button", { name: "Sync from folder" })).toHaveCount(0);
  await page.goto("/capabilities");
  await expect(page.getByTestId("cap-calculator.evaluate")).toBeVisible();
  await expect(page.getByRole("button", { name: /Change category/ })).toHaveCount(0);
  await page.goto("/rules");
  await expect(page.getByRole("button", { name: "Add rule" })).toHaveCount(0);
  await expect(page.getByRole("radio", { name: /^auto/ })).toBeDisabled();
  await expect(page.getByRole("link", { name: "API keys" })).toHaveCount(0);
  await page.goto("/keys");
  await expect(page.getByRole("alert").filter({ hasText: "FORBIDDEN" })).toBeVisible();
  const status = await page.evaluate(async () => {
    const res = await fetch("/api/trpc/rules.create", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ effect: "allow", pattern: "*" }),
    });
    return res.status;
  });
  expect(status).toBe(403);
  await context.close();
});

test("[THEME]: the dark theme applies to every page and is kept until switched back", async ({ browser }) => {
  const page = await asAdmin(browser);
  await page.goto("/capabilities");
  await page.getByRole("button", { name: "Switch to dark theme" }).click();
  await expectTheme(page, "dark");
  await screenshot(page, "capabilities-dark");
  await page.goto("/rules");
  await expectTheme(page, "dark");
  await screenshot(page, "rules-dark");
  await page.goto("/toolsets/weather");
  await expectTheme(page, "dark");
  await expect(page.getByTestId("toolset-doc")).toBeVisible();
  await screenshot(page, "toolset-detail-dark");
  await page.getByRole("button", { name: "Switch to light theme" }).click();
  await expectTheme(page, "light");
  await page.reload();
  await expectTheme(page, "light");
});
