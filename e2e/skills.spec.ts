import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, type Page, test } from "@playwright/test";
import { adminContext, screenshot } from "./helpers";

/**
 * Skills in the console and from an action: the shipped examples are listed, an admin uploads a
 * skill folder, reads its SKILL.md and files, and a playground action loads it and runs its script.
 */
test.describe.configure({ mode: "serial" });

const SKILL = "greeting-card";
let folder: string;

test.beforeAll(() => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "e2e-skill-"));
  folder = path.join(root, SKILL);
  fs.mkdirSync(path.join(folder, "scripts"), { recursive: true });
  fs.mkdirSync(path.join(folder, "references"), { recursive: true });
  fs.writeFileSync(
    path.join(folder, "SKILL.md"),
    `---\nname: ${SKILL}\ndescription: Write a short greeting card for a person.\nallowed-tools: calculator.evaluate\n---\n\n# Greeting cards\n\nRun \`scripts/card.js\` with \`{ to }\`, then read <b>references/tone.md</b>.\n`,
  );
  fs.writeFileSync(path.join(folder, "references", "tone.md"), "Keep it warm and under twenty words.\n");
  fs.writeFileSync(
    path.join(folder, "scripts", "card.js"),
    "export default async function (input) {\n  return { card: `Dear ${input.to}, have a lovely day!` };\n}\n",
  );
});

function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !/favicon|Failed to load resource/.test(m.text())) errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  return errors;
}

test("[SKILLS]: the shipped skills are listed; an admin uploads a skill folder and reads it", async ({
  browser,
}) => {
  const { page, context } = await adminContext(browser);
  const errors = watchConsole(page);
  await page.getByRole("link", { name: "Skills", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Skills", level: 1 })).toBeVisible();
  const list = page.getByRole("list", { name: "Skills" });
  await expect(list.getByRole("link", { name: /internal-comms/ })).toBeVisible();
  await expect(list.getByRole("link", { name: /csv-tables/ })).toBeVisible();

  await page.getByRole("button", { name: "Upload…" }).click();
  await page.getByLabel("Skill folder").setInputFiles(folder);
  await expect(page.getByRole("status")).toContainText(`${SKILL} v1 created`);
  await page.getByLabel("Search skills").fill("greeting");
  await expect(list.getByRole("link")).toHaveCount(1);
  await screenshot(page, "skills-list");
  await list.getByRole("link", { name: new RegExp(SKILL) }).click();

  await expect(page.getByRole("heading", { name: new RegExp(SKILL), level: 1 })).toBeVisible();
  const body = page.getByTestId("skill-body");
  await expect(body.getByRole("heading", { name: "Greeting cards" })).toBeVisible();
  // Raw HTML in SKILL.md is not rendered.
  await expect(body.locator("b")).toHaveCount(0);
  // allowed-tools is shown, and an admin can turn it into a rule.
  await expect(page.getByText("calculator.evaluate")).toBeVisible();
  await expect(page.getByRole("link", { name: "Make a rule…" })).toHaveAttribute(
    "href",
    /pattern=calculator\.evaluate/,
  );

  const files = page.getByRole("list", { name: "Files" });
  await files.getByRole("button", { name: /scripts\/card\.js/ }).click();
  await expect(page.getByTestId("skill-file-view")).toContainText("have a lovely day");
  await files.getByRole("button", { name: /references\/tone\.md/ }).click();
  await expect(page.getByTestId("skill-file-view")).toContainText("Keep it warm");
  await screenshot(page, "skill-detail");
  await page.setViewportSize({ width: 390, height: 900 });
  await screenshot(page, "skill-detail-390");

  await page.getByRole("link", { name: "Make a rule…" }).click();
  await expect(page.getByRole("heading", { name: "Rules and modes" })).toBeVisible();
  expect(errors).toEqual([]);
  await context.close();
});

test("[SKILLS]: a playground action loads the skill and runs its script", async ({ browser }) => {
  const { page, context } = await adminContext(browser);
  const code = [
    'import { list, load, run } from "toolstore/skills";',
    "export default async function () {",
    "  const names = (await list({})).skills.map((s) => s.name);",
    `  const { body } = await load({ name: "${SKILL}" });`,
    `  const ran = await run({ name: "${SKILL}", path: "scripts/card.js", input: { to: "Ada" } });`,
    "  return { names, heading: body.split('\\n')[0], card: ran.result.card };",
    "}",
  ].join("\n");
  const saved = await page.evaluate(async (text) => {
    const res = await fetch("/api/trpc/playground.save", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ code: text, mode: "auto" }),
    });
    return res.ok;
  }, code);
  expect(saved).toBe(true);
  await page.goto("/playground");
  await expect(page.locator(".monaco-editor .view-lines")).toContainText(/toolstore\/skills/, {
    timeout: 20_000,
  });
  await page.getByLabel("Mode", { exact: true }).selectOption("auto");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const result = page.getByTestId("pane-result");
  await expect(result).toContainText("Dear Ada, have a lovely day!", { timeout: 30_000 });
  await expect(result).toContainText("# Greeting cards");
  await expect(result).toContainText("internal-comms");
  const timeline = page.getByTestId("timeline");
  await expect(timeline.locator('li[data-capability="skills.run"]')).toBeVisible();
  await screenshot(page, "skills-playground");
  await context.close();
});
