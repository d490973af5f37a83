import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type BrowserContext, expect, type Locator, type Page, test } from "@playwright/test";
import { E2E_WEATHER_PORT } from "../playwright.config";
import { adminContext, screenshot } from "./helpers";

/**
 * Python toolsets in a real Chromium against the built app: the plan's calculator (§9) uploaded as
 * toolset.py through the console, the plan's weather toolset (§2.3) verbatim, its host pointed at a
 * local stand-in by TOOLSTORE_EGRESS_ALIASES (playwright.config.ts), the plan's docker definition
 * (§9) migrated by the CLI and uploaded, and the shipped textkit example — each called from an action typed into the
 * playground's editor, through the gate, with the decision and the result shown live.
 */
test.describe.configure({ mode: "serial" });

const FIXTURES = path.resolve("server/core/python/fixtures");
const read = (file: string) => fs.readFileSync(file, "utf8");
// A cold Pyodide start takes seconds, far more on a loaded machine.
const COLD = { timeout: 60_000 };

function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !/favicon|Failed to load resource/.test(m.text())) errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  return errors;
}

function row(page: Page, capability: string): Locator {
  return page.getByTestId("timeline").locator(`li[data-capability="${capability}"]`).last();
}

/** Replaces the editor's text with `code` (inserted as one edit, so no auto-closed brackets). */
async function typeAction(page: Page, code: string) {
  await page.goto("/playground");
  await expect(page.getByRole("heading", { name: "Playground" })).toBeVisible();
  const lines = page.locator(".monaco-editor .view-lines");
  await expect(lines).toBeVisible({ timeout: 20_000 });
  await page
    .locator(".monaco-editor .view-line")
    .first()
    .click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(code);
  await expect(lines).toContainText(code.split("\n")[0]?.trim().replace(/ /g, "\u00a0") ?? "");
}

/**
 * Runs `code` from the playground in default mode, where a bare `@tool` (its category waiting for
 * an admin) asks: the second admin allows it once from the queue, whose card must show `shows`;
 * then the decision turns to allowed and the run to ok.
 */
async function runAllowedOnce(page: Page, capability: string, code: string, shows: string[]) {
  await typeAction(page, code);
  await page.getByLabel("Mode", { exact: true }).selectOption("default");
  const queue = second.page;
  await queue.goto("/approvals");
  await expect(queue.getByTestId("live-status")).toContainText("live");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await expect(row(page, capability).getByTestId("decision")).toHaveText("waiting…");
  const link = row(page, capability).getByRole("link", { name: "Open in queue" });
  const approvalId = ((await link.getAttribute("href")) ?? "").split("#")[1] ?? "";
  const card = queue.locator(`[id="${approvalId}"]`);
  for (const text of [capability, ...shows]) await expect(card).toContainText(text);
  await card.getByRole("button", { name: "Allow once" }).click();
  await expect(row(page, capability).getByTestId("decision")).toHaveText("allowed", COLD);
  await expect(page.getByTestId("run-status")).toContainText("ok", COLD);
}

let second: { context: BrowserContext; page: Page };
test.beforeAll(async ({ browser }) => {
  second = await adminContext(browser);
});
test.afterAll(async () => {
  await second.context.close();
});

test("[PYTHON]: the plan's calculator is uploaded as toolset.py; its page shows the language and names toolset.py", async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const { page, context } = await adminContext(browser);
  const errors = watchConsole(page);
  await page.goto("/toolsets");
  await page.getByRole("button", { name: "Upload…" }).click();
  await page.getByLabel("Name").fill("pycalc");
  await page.getByLabel("Language").selectOption("python");
  await page.getByLabel("doc.md text").fill(read(path.join(FIXTURES, "calculator/doc.md")));
  await page.getByLabel("toolset.py text").fill(read(path.join(FIXTURES, "calculator/toolset.py")));
  await page.getByRole("button", { name: "Validate and publish" }).click();
  const status = page.getByRole("status").filter({ hasText: "pycalc" });
  await expect(status).toContainText("v1", COLD);
  // A bare @tool (as in the plan) is accepted; the category waits for an admin.
  await expect(status).toContainText("no category");

  // The list reads the language from the stored version.
  const card = page.locator(".toolset-card", { hasText: "pycalc" });
  await expect(card.getByTestId("language-badge")).toHaveText("Python · toolset.py");
  await expect(page.locator(".toolset-card", { hasText: "units" }).getByTestId("language-badge")).toHaveText(
    "TypeScript · toolset.ts",
  );

  await page.goto("/toolsets/pycalc");
  await expect(page.getByRole("heading", { name: /pycalc/ }).getByTestId("language-badge")).toHaveText(
    "Python · toolset.py",
  );
  await expect(page.getByTestId("binding-compute")).toContainText("compute");
  // The bare @tool says so beside its category, and where an admin sets one.
  const undeclared = page.getByTestId("undeclared-compute");
  await expect(undeclared).toContainText("no category declared");
  await expect(undeclared.getByRole("link", { name: "review" })).toHaveAttribute("href", "/capabilities");
  // An uploaded toolset has no folder to publish from.
  await expect(page.getByRole("button", { name: "Publish from folder" })).toHaveCount(0);
  await screenshot(page, "python-toolset-desktop");
  await page.getByRole("tab", { name: "Code" }).click();
  const code = page.getByRole("region", { name: "toolset.py" });
  await expect(code.getByRole("heading", { name: "toolset.py", exact: true })).toBeVisible();
  await expect(code).toContainText("def compute(a: float");
  await page.getByRole("tab", { name: /Versions/ }).click();
  await expect(page.getByTestId("version-1")).toContainText("toolset.py");

  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole("tab", { name: "Overview" }).click();
  await screenshot(page, "python-toolset-390");
  await page.getByRole("tab", { name: "Code" }).click();
  await screenshot(page, "python-toolset-code-390");
  // Nothing wider than the phone's screen: the page does not scroll sideways.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  expect(errors).toEqual([]);
  await context.close();
});

test("[PYTHON]: an action typed in the playground calls the calculator; the gate asks, the queue allows, the result shows", async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const { page, context } = await adminContext(browser);
  const errors = watchConsole(page);
  // The category is pending (bare @tool), so default mode asks, like execute.
  await runAllowedOnce(
    page,
    "pycalc.compute",
    [
      'import { compute } from "toolstore/pycalc";',
      "export default async function () {",
      '  return await compute({ a: 6, b: 7, op: "multiply" });',
      "}",
    ].join("\n"),
    ["multiply"],
  );
  await expect(page.getByTestId("pane-result")).toContainText(/"result":\s*42/);
  await screenshot(page, "python-playground-allowed");
  expect(errors).toEqual([]);
  await context.close();
});

test("[PYTHON]: the plan's docker definition, migrated by the CLI and uploaded, runs through store.execute with textkit", async ({
  browser,
}) => {
  test.setTimeout(180_000);
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "toolstore-e2e-docker-")), "calc_docker");
  await promisify(execFile)(
    "npx",
    [
      "tsx",
      "server/cli/main.ts",
      "migrate-docker",
      path.join(FIXTURES, "legacy/calculator-docker.json"),
      "--out",
      out,
      "--name",
      "calc_docker",
      "--category",
      "read",
    ],
    { timeout: 120_000 },
  );
  const { page, context } = await adminContext(browser);
  const errors = watchConsole(page);
  await page.goto("/toolsets");
  await page.getByRole("button", { name: "Upload…" }).click();
  await page.getByLabel("Name").fill("calc_docker");
  const files = page.locator('form input[type="file"]');
  await files.nth(0).setInputFiles(path.join(out, "doc.md"));
  // Picking a .py file makes the upload a Python toolset.
  await files.nth(1).setInputFiles(path.join(out, "toolset.py"));
  await expect(page.getByLabel("Language")).toHaveValue("python");
  await expect(page.getByLabel("toolset.py text")).toHaveValue(/def main\(a, b, op\)/);
  await page.getByRole("button", { name: "Validate and publish" }).click();
  await expect(page.getByRole("status").filter({ hasText: "calc_docker" })).toContainText("v1", COLD);

  await typeAction(
    page,
    [
      'import { execute } from "toolstore/store";',
      "export default async function () {",
      '  const docker = await execute({ tool_name: "calc_docker", arguments: { a: 1, b: 2, op: "add" } });',
      '  const words = await execute({ tool_name: "textkit", arguments: { function: "word_count", text: "one two two" } });',
      "  return { docker, words };",
      "}",
    ].join("\n"),
  );
  await page.getByLabel("Mode", { exact: true }).selectOption("default");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  // Both are read (one by --category, one declared): default mode runs them without asking.
  await expect(page.getByTestId("run-status")).toContainText("ok", COLD);
  await expect(row(page, "calc_docker.main").getByTestId("decision")).toHaveText("allowed");
  await expect(row(page, "textkit.word_count").getByTestId("decision")).toHaveText("allowed");
  // The plan's docker code is `def main(a, b, op): ...`: it returns None.
  await expect(page.getByTestId("pane-result")).toContainText(/"docker":\s*null/);
  await expect(page.getByTestId("pane-result")).toContainText(/"words":\s*3\b/);
  await screenshot(page, "python-playground-store-execute");
  expect(errors).toEqual([]);
  await context.close();
});

test("[PYTHON]: the plan's weather toolset, verbatim, reaches its declared host (pointed at a local stand-in) from the playground", async ({
  browser,
}) => {
  test.setTimeout(180_000);
  // The "internet" for api.openweathermap.org: the e2e server's alias sends that host here.
  const seen: string[] = [];
  const api = http.createServer((req, res) => {
    seen.push(req.url ?? "");
    const q = new URL(req.url ?? "/", "http://x").searchParams.get("q");
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ name: q, main: { temp: 12.5 } }));
  });
  await new Promise<void>((r) => api.listen(E2E_WEATHER_PORT, "127.0.0.1", () => r()));
  try {
    const { page, context } = await adminContext(browser);
    const errors = watchConsole(page);
    await page.goto("/toolsets");
    await page.getByRole("button", { name: "Upload…" }).click();
    await page.getByLabel("Name").fill("pyweather");
    await page.getByLabel("Language").selectOption("python");
    await page.getByLabel("doc.md text").fill(read(path.join(FIXTURES, "weather/doc.md")));
    await page.getByLabel("toolset.py text").fill(read(path.join(FIXTURES, "weather/toolset.py")));
    await page.getByRole("button", { name: "Validate and publish" }).click();
    await expect(page.getByRole("status").filter({ hasText: "pyweather" })).toContainText("v1", COLD);

    // The plan's code names https://api.openweathermap.org: the admin allows that host.
    await page.goto("/toolsets/pyweather#settings");
    await page.getByLabel(/Allowed hosts/).fill("api.openweathermap.org");
    await page.getByRole("button", { name: "Save limits" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Saved." })).toBeVisible();

    // A bare @tool: its category waits for an admin, so default mode asks.
    await runAllowedOnce(
      page,
      "pyweather.get_weather",
      [
        'import { get_weather } from "toolstore/pyweather";',
        "export default async function () {",
        '  return await get_weather({ location: "Paris" });',
        "}",
      ].join("\n"),
      [],
    );
    await expect(page.getByTestId("pane-result")).toContainText(/"name":\s*"Paris"/);
    await expect(page.getByTestId("pane-result")).toContainText(/"temp":\s*12\.5/);
    // The plan's request, as written: path and query of the declared host.
    expect(
      seen.some(
        (u) => u.startsWith("/data/2.5/weather?") && u.includes("q=Paris") && u.includes("units=metric"),
      ),
    ).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  } finally {
    await new Promise<void>((r) => api.close(() => r()));
  }
});
