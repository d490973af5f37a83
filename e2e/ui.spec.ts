import { expect, type Page, test } from "@playwright/test";
import { adminContext, screenshot } from "./helpers";

/**
 * toolstore/ui in the playground, in a real Chromium against the built app: the run's question
 * appears inline in its timeline, only in the tab that started it; clicking a choice returns it
 * to the action; ui.show renders a table. And the library modules on the Capabilities page.
 */
test.describe.configure({ mode: "serial" });

async function openPlayground(page: Page) {
  await page.goto("/playground");
  await expect(page.getByRole("heading", { name: "Playground" })).toBeVisible();
  await expect(page.locator(".monaco-editor .view-lines")).toBeVisible({ timeout: 20_000 });
}

test("[UI]: ui.ask with choices is answered inline in the tab that runs it, and ui.show renders a table", async ({
  browser,
}) => {
  const { page, context } = await adminContext(browser);
  await openPlayground(page);
  await page
    .getByLabel("Examples", { exact: true })
    .selectOption({ label: "Ask the person here (toolstore/ui)" });
  await expect(page.locator(".monaco-editor .view-lines")).toContainText(/Ask,\sthen\sshow/);
  await page.getByLabel("Mode", { exact: true }).selectOption("default");

  const started = page.waitForResponse((r) => r.url().includes("playground.run"));
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const runId = /"runId":"([^"]+)"/.exec(await (await started).text())?.[1] ?? "";
  expect(runId).not.toBe("");

  const timeline = page.getByTestId("timeline");
  const table = timeline.getByTestId("ui-table");
  await expect(table).toBeVisible();
  await expect(table).toContainText("Rome");
  await expect(table).toContainText("18");
  const question = timeline.locator('[data-testid="ui-pane"][data-call="ask"]');
  await expect(question).toContainText("Which city should the report be about?");
  await expect(timeline.locator('li[data-capability="ui.ask"]').getByTestId("decision")).toHaveText(
    "allowed",
  );
  await expect(page.getByTestId("run-status")).toContainText("waiting for your answer");

  // A second tab of the same person, on the run's page and on the playground: no question.
  const other = await context.newPage();
  await other.goto(`/runs/${runId}`);
  await expect(other.getByTestId("timeline").locator('li[data-capability="ui.ask"]')).toBeVisible();
  // (The run page shows the action's code, question text included; the question itself is not there.)
  await expect(other.getByTestId("ui-pane")).toHaveCount(0);
  await expect(other.getByRole("button", { name: "Rome" })).toHaveCount(0);
  await other.goto("/playground");
  await expect(other.getByRole("heading", { name: "Playground" })).toBeVisible();
  await expect(other.getByTestId("ui-pane")).toHaveCount(0);
  await other.close();

  await screenshot(page, "ui-ask-desktop");
  await page.setViewportSize({ width: 390, height: 844 });
  await question.scrollIntoViewIfNeeded();
  await screenshot(page, "ui-ask-390");
  await page.setViewportSize({ width: 1280, height: 720 });

  await question.getByRole("button", { name: "Rome" }).click();
  await expect(question.getByTestId("ui-answer")).toHaveText('Answered: "Rome"');
  await expect(page.getByTestId("run-status")).toContainText("ok");
  await expect(page.getByTestId("pane-result")).toContainText('"Rome"');
  await expect(page.getByTestId("pane-result")).toContainText("18");
  await expect(timeline.locator('li[data-capability="ui.progress"]')).toContainText(
    "Writing the report on Rome",
  );
  await screenshot(page, "ui-answered-desktop");
  await context.close();
});

test("[UI]: the Capabilities page lists the library modules, with no category", async ({ browser }) => {
  const { page, context } = await adminContext(browser);
  await page.goto("/capabilities");
  const libraries = page.getByTestId("libraries");
  await expect(libraries.getByRole("heading", { name: "Libraries" })).toBeVisible();
  for (const name of ["yaml", "csv", "dates"]) await expect(libraries).toContainText(`toolstore/lib/${name}`);
  await libraries.getByText("toolstore/lib/csv").click();
  await expect(libraries).toContainText("parse(text: string, options?: CsvParseOptions): CsvResult");
  await screenshot(page, "capabilities-libraries-desktop");
  await page.setViewportSize({ width: 390, height: 844 });
  await libraries.scrollIntoViewIfNeeded();
  await screenshot(page, "capabilities-libraries-390");
  await context.close();
});
