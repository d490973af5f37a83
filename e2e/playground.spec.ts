import { type BrowserContext, expect, type Locator, type Page, test } from "@playwright/test";
import { ADMIN, adminContext, expectTheme, screenshot, signIn } from "./helpers";

/**
 * The playground, the approval queue and the runs pages, in a real Chromium against the built
 * app: live gate decisions, approving from a second page, denying, plan mode, session grants.
 */
test.describe.configure({ mode: "serial" });

/** Console errors and failed requests fail the test (the browser's own favicon request aside). */
function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !/favicon|Failed to load resource/.test(m.text())) errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("response", (r) => {
    if (r.status() >= 400 && !r.url().includes("favicon")) errors.push(`${r.status()} ${r.url()}`);
  });
  return errors;
}

async function openPlayground(page: Page) {
  await page.goto("/playground");
  await expect(page.getByRole("heading", { name: "Playground" })).toBeVisible();
  await expect(page.locator(".monaco-editor .view-lines")).toBeVisible({ timeout: 20_000 });
}

/** Loads an example into the editor and picks the mode. */
async function prepare(page: Page, example: string, mode: "plan" | "default" | "auto") {
  await page.getByLabel("Examples", { exact: true }).selectOption({ label: example });
  await expect(page.locator(".monaco-editor .view-lines")).toContainText(
    /read,\sthen\swrite|refusal|bar\schart|calculate/i,
  );
  await page.getByLabel("Mode", { exact: true }).selectOption(mode);
}

function row(page: Page, capability: string): Locator {
  return page.getByTestId("timeline").locator(`li[data-capability="${capability}"]`).last();
}

/** The approval id the playground shows for a waiting call (from its "Open in queue" link). */
async function waitingApprovalId(page: Page, capability: string): Promise<string> {
  const link = row(page, capability).getByRole("link", { name: "Open in queue" });
  await expect(link).toBeVisible();
  const href = (await link.getAttribute("href")) ?? "";
  return href.split("#")[1] ?? "";
}

let second: { context: BrowserContext; page: Page };

test.beforeAll(async ({ browser }) => {
  second = await adminContext(browser);
});
test.afterAll(async () => {
  await second.context.close();
});

test("[PLAYGROUND]: the editor completes toolstore imports and argument names", async ({ browser }) => {
  const { page, context } = await adminContext(browser);
  const errors = watchConsole(page);
  // The last code is kept per user on the server: seed it, then open the editor on it.
  const lines = [
    'import { save } from "toolstore/assets";',
    'import {  } from "toolstore/store";',
    "save({  });",
  ];
  const saved = await page.evaluate(async (code) => {
    const res = await fetch("/api/trpc/playground.save", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ code, mode: "default" }),
    });
    return res.ok;
  }, lines.join("\n"));
  expect(saved).toBe(true);
  await openPlayground(page);
  await expect(page.locator(".monaco-editor .view-lines")).toContainText(/import\s\{\s+\}\sfrom/);
  // Click the first line near its start (the middle of a wide editor would scroll it sideways).
  await page
    .locator(".monaco-editor .view-line")
    .first()
    .click({ position: { x: 5, y: 5 } });
  const suggest = page.locator(".suggest-widget.visible");

  // Inside the braces of the store import: the module's exports.
  await page.keyboard.press("ControlOrMeta+Home");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("End");
  for (let i = 0; i < ' } from "toolstore/store";'.length; i++) await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("Control+Space");
  await expect(suggest).toContainText("search");
  await expect(suggest).toContainText("execute");
  await page.keyboard.press("Escape");

  // Inside the argument object of save(): the names from its input schema.
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("End");
  for (let i = 0; i < " });".length; i++) await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("Control+Space");
  await expect(suggest).toContainText("data_base64");
  await expect(suggest).toContainText("name");
  // Not full-page: resizing the viewport would close the suggestion list.
  await page.waitForTimeout(400);
  await page.screenshot({ path: "test-results/screens/playground-completions.png" });
  await page.keyboard.press("Escape");
  expect(errors).toEqual([]);
  await context.close();
});

test("[PLAYGROUND]: a read runs, a write waits and is approved from the queue on a second page", async ({
  browser,
}) => {
  const { page, context } = await adminContext(browser);
  const errors = watchConsole(page);
  await openPlayground(page);
  await prepare(page, "Read, then write (asks for approval)", "default");
  // The queue is already open on another page: the request must appear there without a reload.
  const queue = second.page;
  await queue.goto("/approvals");
  await expect(queue.getByTestId("live-status")).toContainText("live");
  // Earlier specs may leave requests pending (they expire on their own); count from here.
  const badge = queue.getByTestId("approvals-badge");
  const pendingBefore = (await badge.count()) ? Number.parseInt(await badge.innerText(), 10) || 0 : 0;
  await page.getByRole("button", { name: "Run", exact: true }).click();

  await expect(row(page, "store.list").getByTestId("decision")).toHaveText("allowed");
  await expect(row(page, "assets.save").getByTestId("decision")).toHaveText("waiting…");
  const approvalId = await waitingApprovalId(page, "assets.save");
  const card = queue.locator(`[id="${approvalId}"]`);
  await expect(card).toBeVisible({ timeout: 1_000 });
  await expect(page.getByTestId("run-status")).toContainText("waiting for approval: assets.save");
  await screenshot(page, "playground-waiting");

  // The card: what exactly, who asked, until when.
  await expect(card).toContainText("assets.save");
  await expect(card).toContainText("write");
  await expect(card).toContainText(`${ADMIN.username} (playground)`);
  await expect(card.getByRole("button", { name: "show all" })).toBeVisible();
  await expect(card).toContainText(/expires in \d:\d\d/);
  await expect(badge).toHaveText(new RegExp(`^${pendingBefore + 1}\\b`));
  await screenshot(queue, "approvals-pending");
  await card.getByRole("button", { name: "Allow once" }).click();
  await expect(queue.locator(`[id="${approvalId}"]`)).toHaveCount(1); // now in the history table
  await expect(queue.getByTestId("approval-history")).toContainText("allowed once");

  // Back in the playground: both decisions, the result and the image.
  await expect(row(page, "assets.save").getByTestId("decision")).toHaveText("allowed");
  await expect(row(page, "assets.save")).toContainText(`approved once by ${ADMIN.displayName}`);
  await expect(row(page, "store.list").getByTestId("decision")).toHaveText("allowed");
  await expect(page.getByTestId("run-status")).toContainText("ok");
  await expect(page.getByTestId("pane-result")).toContainText("saved");
  await page.getByRole("tab", { name: /Logs/ }).click();
  await expect(page.getByTestId("pane-logs")).toContainText("modules mounted");
  await page.getByRole("tab", { name: /Images/ }).click();
  const img = page.getByTestId("pane-images").locator("img");
  await expect(img).toBeVisible();
  await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.naturalWidth)).toBe(64);
  await screenshot(page, "playground-finished");
  await screenshot(queue, "approvals-history");

  // The run page tells the same story from the stored records.
  await page.getByRole("link", { name: "Open run" }).click();
  await expect(page.getByRole("heading", { name: /Read, then write/ })).toBeVisible();
  await expect(row(page, "store.list").getByTestId("decision")).toHaveText("allowed");
  await expect(row(page, "assets.save")).toContainText(`approved once by ${ADMIN.displayName}`);
  await expect(page.locator(".code-view")).toContainText('import { save } from "toolstore/assets";');
  await page.getByRole("tab", { name: /Images/ }).click();
  await expect(page.getByTestId("pane-images").locator("img")).toBeVisible();
  await screenshot(page, "run-detail");
  expect(errors).toEqual([]);
  await context.close();
});

test("[LIVE]: six console tabs in one browser share no connection limit: one socket each, and a click still gets through", async ({
  browser,
}) => {
  // Over HTTP/1.1 a browser opens six connections to a host, for all its tabs. When each live
  // view held an SSE stream, two dashboard tabs took all six and a click's request never left.
  const { page, context } = await adminContext(browser);
  const sockets: string[] = [];
  const streams: string[] = [];
  context.on("page", (tab) => {
    tab.on("websocket", (ws) => sockets.push(ws.url()));
    tab.on("request", (r) => {
      if (r.url().includes("/api/trpc") && (r.headers().accept ?? "").includes("text/event-stream"))
        streams.push(r.url());
    });
  });
  page.on("websocket", (ws) => sockets.push(ws.url()));
  const tabs: Page[] = [];
  for (const path of ["/", "/", "/runs", "/approvals"]) {
    const tab = await context.newPage();
    await tab.goto(path);
    tabs.push(tab);
  }
  const queue = tabs[3] as Page;
  await expect(queue.getByTestId("live-status")).toContainText("live");
  await expect(tabs[0]?.getByTestId("live-status") as Locator).toContainText("live");
  await openPlayground(page);
  await prepare(page, "Read, then write (asks for approval)", "default");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const approvalId = await waitingApprovalId(page, "assets.save");
  // The other tabs follow live, and the click in the queue reaches the server.
  await expect(queue.locator(`[id="${approvalId}"]`)).toBeVisible({ timeout: 2_000 });
  await queue.locator(`[id="${approvalId}"]`).getByRole("button", { name: "Allow once" }).click();
  await expect(page.getByTestId("run-status")).toContainText("ok");
  await expect(queue.getByTestId("approval-history")).toContainText("allowed once");
  // Every tab's live views went over its socket, and none over an SSE stream.
  expect(streams).toEqual([]);
  expect(sockets.length).toBeGreaterThanOrEqual(5);
  expect(sockets.every((url) => new URL(url).pathname === "/api/trpc")).toBe(true);
  // The socket carries subscriptions only: a mutation sent over it by hand is refused.
  const refused = await queue.evaluate(
    () =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(`ws://${location.host}/api/trpc`);
        ws.onopen = () =>
          ws.send(
            JSON.stringify({ id: 1, method: "mutation", params: { path: "auth.signOut", input: null } }),
          );
        ws.onmessage = (m) => {
          if (String(m.data).includes('"id":1')) resolve(String(m.data));
        };
        setTimeout(() => resolve("no answer"), 5_000);
      }),
  );
  expect(refused).toContain("subscriptions only");
  await expect(queue.getByTestId("live-status")).toContainText("live");
  await context.close();
});

test("[APPROVALS]: D on the focused card denies; the action sees permission_denied", async ({ browser }) => {
  const { page, context } = await adminContext(browser);
  await openPlayground(page);
  await prepare(page, "Handle a refusal (deny or plan mode)", "default");
  await page.keyboard.press("ControlOrMeta+Enter");
  const approvalId = await waitingApprovalId(page, "assets.save");

  const queue = second.page;
  await queue.goto(`/approvals#${approvalId}`);
  const card = queue.locator(`[id="${approvalId}"]`);
  await expect(card).toBeFocused();
  await expect(card).toHaveClass(/flash/);
  await queue.keyboard.press("d");
  await expect(queue.getByTestId("approval-history").locator(`[id="${approvalId}"]`)).toContainText("denied");

  await expect(row(page, "assets.save").getByTestId("decision")).toHaveText("denied");
  await expect(row(page, "assets.save")).toContainText(`denied by ${ADMIN.displayName}`);
  await expect(page.getByTestId("pane-result")).toContainText("permission_denied");
  await screenshot(page, "playground-denied");
  await context.close();
});

test("[PLAYGROUND]: plan mode is a dry run; its plan is approved once in the queue and then runs", async ({
  browser,
}) => {
  const { page, context } = await adminContext(browser);
  await openPlayground(page);
  await prepare(page, "Read, then write (asks for approval)", "plan");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await expect(row(page, "store.list").getByTestId("decision")).toHaveText("allowed");
  await expect(row(page, "assets.save").getByTestId("decision")).toHaveText("blocked");
  await expect(row(page, "assets.save")).toContainText("planned: not run in plan mode");
  await expect(page.getByTestId("run-status")).toContainText("ok");
  const plan = page.getByTestId("plan-card");
  await expect(plan).toContainText("Plan: 1 call not run");
  await expect(plan.getByTestId("plan-call")).toHaveCount(1);
  await expect(plan.getByTestId("plan-call")).toContainText("assets.save");
  await expect(plan.getByTestId("plan-call")).toContainText("toolstore-mark");
  await screenshot(page, "playground-plan");

  // One approval for the whole plan, in the queue on the second page.
  const queue = second.page;
  await queue.goto("/approvals");
  await expect(queue.getByTestId("live-status")).toContainText("live");
  await plan.getByRole("button", { name: "Ask to run this plan" }).click();
  await expect(plan).toContainText("Waiting for approval of the plan");
  const card = queue.locator("article", { hasText: "toolstore.plan" }).first();
  await expect(card).toBeVisible();
  await expect(card).toContainText("assets.save");
  await screenshot(queue, "approvals-plan");
  await card.getByRole("button", { name: "Allow once" }).click();

  // The approved run: the planned write runs under the plan, without asking again.
  await expect(row(page, "assets.save").getByTestId("decision")).toHaveText("allowed");
  await expect(row(page, "assets.save")).toContainText("covered by the approved plan");
  await expect(page.getByTestId("run-status")).toContainText("ok");
  await expect(page.getByTestId("pane-result")).toContainText("saved");
  await expect(page.getByTestId("plan-card")).toHaveCount(0);
  await context.close();
});

test("[APPROVALS]: allow for session inline, then revoke the session's grants in one action", async ({
  browser,
}) => {
  const { page, context } = await adminContext(browser);
  await openPlayground(page);
  await prepare(page, "Read, then write (asks for approval)", "default");
  const run = page.getByRole("button", { name: "Run", exact: true });

  await run.click();
  await row(page, "assets.save").getByRole("button", { name: "Allow for session" }).click();
  await expect(row(page, "assets.save")).toContainText("approved for this session");
  await expect(page.getByTestId("run-status")).toContainText("ok");

  // The grant covers the next call of this session: no question asked.
  await run.click();
  await expect(page.getByTestId("run-status")).toContainText("ok");
  await expect(row(page, "assets.save").getByTestId("decision")).toHaveText("allowed");
  await expect(row(page, "assets.save").getByRole("button", { name: "Allow once" })).toHaveCount(0);

  const queue = second.page;
  await queue.goto("/approvals");
  const grants = queue.getByRole("region", { name: "Session grants" });
  await expect(grants).toContainText(`${ADMIN.username} (playground)`);
  await expect(grants).toContainText("assets.save");
  await screenshot(queue, "approvals-grants");
  await grants
    .getByRole("button", { name: /Revoke session grants/ })
    .first()
    .click();
  await expect(grants).toContainText("No session grants");

  // Revoked: the same call asks again.
  await run.click();
  await expect(row(page, "assets.save").getByTestId("decision")).toHaveText("waiting…");
  await row(page, "assets.save").getByRole("button", { name: "Deny" }).click();
  await expect(row(page, "assets.save").getByTestId("decision")).toHaveText("denied");
  await context.close();
});

test("[RUNS]: history filters by surface, status and capability", async ({ browser }) => {
  const { page, context } = await adminContext(browser);
  await page.goto("/runs");
  const table = page.getByRole("table", { name: "Runs" });
  await expect(table).toContainText("Read, then write");
  await expect(table).toContainText("playground");
  await screenshot(page, "runs");

  await page.getByLabel("Status").selectOption("error");
  await expect(page).toHaveURL(/status=error/);
  await expect(table).toContainText("threw");
  await expect(table.locator("tbody tr").filter({ hasText: /\bok\b/ })).toHaveCount(0);
  // A plan-mode run is a dry run now: it ends ok, in mode plan.
  await page.goto("/runs?status=ok");
  await expect(table).toContainText("plan");

  await page.goto("/runs?capability=store.list");
  await expect(table.locator("tbody tr")).not.toHaveCount(0);
  await page.goto("/runs?capability=assets.*&status=ok");
  await expect(table).toContainText("Read, then write");

  await page.goto("/runs?surface=playground");
  await expect(table.locator("tbody tr").filter({ hasNotText: "playground" })).toHaveCount(0);

  await page.goto("/runs?surface=cli&capability=no.such_capability");
  await expect(page.getByText("No runs match these filters")).toBeVisible();
  await page.getByRole("link", { name: "Clear the filters" }).click();
  await expect(table).toBeVisible();

  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Recent runs" })).toBeVisible();
  await screenshot(page, "dashboard-activity");
  await context.close();
});

test("[RUNS]: a running run's page follows it live and its waiting call can be answered there", async ({
  browser,
}) => {
  const { page, context } = await adminContext(browser);
  await openPlayground(page);
  await prepare(page, "Read, then write (asks for approval)", "default");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const approvalId = await waitingApprovalId(page, "assets.save");

  // From the queue card to the run it belongs to.
  const other = second.page;
  await other.goto("/approvals");
  await other.locator(`[id="${approvalId}"]`).getByRole("link", { name: /^run / }).click();
  await expect(other.getByRole("heading", { name: /Read, then write/ })).toBeVisible();
  // Still in its hot window (the sandbox waits) or already parked (TOOLSTORE_PARK_AFTER_MS, 3 s
  // by default, ran out before the page loaded on a slow machine): either way it is followed live.
  await expect(
    other.getByRole("progressbar", { name: "Run in progress" }).or(other.getByTestId("parked-note")),
  ).toBeVisible();
  await expect(row(other, "assets.save").getByTestId("decision")).toHaveText("waiting…");
  await screenshot(other, "run-detail-waiting");
  await row(other, "assets.save").getByRole("button", { name: "Allow once" }).click();

  await expect(row(other, "assets.save").getByTestId("decision")).toHaveText("allowed");
  await expect(other.getByRole("progressbar")).toHaveCount(0);
  await expect(other.getByTestId("pane-result")).toContainText("saved");
  await expect(page.getByTestId("run-status")).toContainText("ok");
  await context.close();
});

test("[PLAYGROUND]: Cancel stops a run that waits; its request leaves the queue", async ({ browser }) => {
  const { page, context } = await adminContext(browser);
  await openPlayground(page);
  await prepare(page, "Read, then write (asks for approval)", "default");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const approvalId = await waitingApprovalId(page, "assets.save");
  await page.getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByTestId("run-status")).toContainText("cancelled");
  await expect(row(page, "assets.save").getByTestId("decision")).toHaveText("expired");
  await expect(page.getByTestId("pane-error")).toContainText("cancelled");
  await expect(page.getByRole("button", { name: "Run", exact: true })).toBeEnabled();
  const queue = second.page;
  await queue.goto("/approvals");
  await expect(queue.getByTestId("approval-history").locator(`[id="${approvalId}"]`)).toContainText(
    "expired",
  );
  await context.close();
});

test("[PLAYGROUND]: a toolset draws a chart in auto mode and it shows under Images", async ({ browser }) => {
  const { page, context } = await adminContext(browser);
  await openPlayground(page);
  await prepare(page, "Draw a chart and keep it as an image", "auto");
  await page.keyboard.press("ControlOrMeta+Enter");
  await expect(page.getByTestId("run-status")).toContainText("ok", { timeout: 20_000 });
  await expect(row(page, "chart.bar_chart").getByTestId("decision")).toHaveText("allowed");
  await expect(row(page, "assets.save").getByTestId("decision")).toHaveText("allowed");
  await page.getByRole("tab", { name: /Images/ }).click();
  const img = page.getByTestId("pane-images").locator("img");
  await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.naturalWidth)).toBe(640);
  await screenshot(page, "playground-chart");
  await context.close();
});

test("[ROLES]: a viewer sees the queue read-only and cannot run or answer", async ({ browser }) => {
  const admin = await adminContext(browser);
  await admin.page.goto("/settings/users");
  await admin.page.getByLabel("Username").fill("vera");
  await admin.page.getByLabel("Display name").fill("Vera Viewer");
  await admin.page.getByLabel("Initial password").fill("viewer-password-2");
  await admin.page.getByRole("button", { name: "Add user" }).click();
  await expect(admin.page.getByRole("cell", { name: "vera", exact: true })).toBeVisible();
  await openPlayground(admin.page);
  await prepare(admin.page, "Read, then write (asks for approval)", "default");
  await admin.page.getByRole("button", { name: "Run", exact: true }).click();
  const approvalId = await waitingApprovalId(admin.page, "assets.save");

  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, "vera", "viewer-password-2");
  await page.goto("/approvals");
  const card = page.locator(`[id="${approvalId}"]`);
  await expect(card).toContainText("Read only: answering needs the approver role.");
  await expect(card.getByRole("button", { name: "Allow once" })).toHaveCount(0);
  await card.focus();
  await page.keyboard.press("a");
  await expect(card).toBeVisible();
  // The procedure checks the role too, not only the page.
  const status = await page.evaluate(async (id) => {
    const res = await fetch("/api/trpc/approvals.decide", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ approvalId: id, answer: "once" }),
    });
    return res.status;
  }, approvalId);
  expect(status).toBe(403);
  await screenshot(page, "approvals-viewer");
  await page.goto("/playground");
  await expect(page.getByText("running actions needs the approver role")).toBeVisible();
  await expect(page.getByRole("button", { name: "Run", exact: true })).toBeDisabled();
  await context.close();

  await row(admin.page, "assets.save").getByRole("button", { name: "Deny" }).click();
  await expect(row(admin.page, "assets.save").getByTestId("decision")).toHaveText("denied");
  await admin.context.close();
});

test("[THEME]: the playground and the queue in the dark theme", async ({ browser }) => {
  const { page, context } = await adminContext(browser);
  await page.addInitScript(() => localStorage.setItem("toolstore-theme", "dark"));
  await openPlayground(page);
  await expectTheme(page, "dark");
  // The editor follows the page's theme.
  await expect(page.locator(".monaco-editor").first()).toHaveClass(/vs-dark/);
  await prepare(page, "Read, then write (asks for approval)", "default");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await expect(row(page, "assets.save").getByTestId("decision")).toHaveText("waiting…");
  const approvalId = await waitingApprovalId(page, "assets.save");
  await screenshot(page, "playground-dark");
  await page.goto("/approvals");
  const card = page.locator(`[id="${approvalId}"]`);
  await expect(card).toBeVisible();
  await expect(page.getByTestId("live-status")).toContainText("live");
  await expectTheme(page, "dark");
  await screenshot(page, "approvals-dark");
  await card.focus();
  await page.keyboard.press("d");
  await expect(page.getByTestId("approval-history").locator(`[id="${approvalId}"]`)).toContainText("denied");
  await context.close();
});
