import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, type Page, test } from "@playwright/test";
import { adminContext, screenshot } from "./helpers";

/**
 * External MCP servers in a real Chromium against the built app: add the real
 * @modelcontextprotocol/server-memory from the console, see its tools with proposed categories,
 * accept them, run a playground action that calls one, and approve its write from the queue.
 */
test.describe.configure({ mode: "serial" });

const MEMORY_BIN = path.resolve("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
const MEMORY_FILE = path.join(mkdtempSync(path.join(tmpdir(), "e2e-mcp-")), "memory.jsonl");

function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !/favicon|Failed to load resource/.test(m.text())) errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  return errors;
}

test("[MCP SERVERS]: add a stdio server from the console, review and accept its tools", async ({
  browser,
}) => {
  const { page, context } = await adminContext(browser);
  const errors = watchConsole(page);
  await page.goto("/");
  await page.getByRole("link", { name: "MCP servers" }).click();
  await expect(page.getByRole("heading", { name: "MCP servers" })).toBeVisible();
  await expect(page.getByText("No MCP servers yet")).toBeVisible();
  await screenshot(page, "mcp-servers-empty");

  await page.getByRole("button", { name: "Add server…" }).click();
  const form = page.getByRole("form", { name: "Add an MCP server" });
  await form.getByLabel(/^Name/).fill("memory");
  await form.getByLabel(/^Command/).fill(process.execPath);
  await form.getByLabel(/^Arguments/).fill(MEMORY_BIN);
  await form.getByLabel(/^Environment/).fill(`MEMORY_FILE_PATH=${MEMORY_FILE}`);
  await screenshot(page, "mcp-servers-add");
  await form.getByRole("button", { name: "Add server" }).click();

  await expect(page).toHaveURL(/\/mcp-servers\/memory$/, { timeout: 30_000 });
  await expect(page.getByRole("heading", { name: /memory/ })).toContainText("ready");
  const readGraph = page.getByTestId("tool-read_graph");
  await expect(readGraph).toContainText("pending");
  await expect(readGraph.locator(".cat")).toHaveText("read");
  await expect(page.getByTestId("tool-create_entities").locator(".cat")).toHaveText("write");
  await expect(page.getByTestId("stderr")).toContainText("Knowledge Graph MCP Server running on stdio");
  await screenshot(page, "mcp-server-pending");

  // The same tools wait in the one review queue on the Capabilities page; one is accepted there.
  await page.goto("/capabilities");
  const reviews = page.getByRole("region", { name: /Waiting for a category/ });
  // The first five show; the rest behind "Show all".
  await expect(reviews.getByRole("listitem")).toHaveCount(5);
  await reviews.getByRole("button", { name: /^Show all/ }).click();
  const queuedRead = reviews.getByRole("listitem", { name: "memory.read_graph" });
  await expect(queuedRead).toContainText("mcp");
  await screenshot(page, "capabilities-review-queue");
  await queuedRead.getByPlaceholder(/Why/).fill("reads the graph only");
  await queuedRead.getByRole("button", { name: "Accept read" }).click();
  await expect(queuedRead).toHaveCount(0);
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, "capabilities-review-queue-390");
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto("/mcp-servers/memory");
  await expect(readGraph).toContainText("accepted");

  await page.getByRole("button", { name: /Accept all proposed/ }).click();
  await expect(readGraph).toContainText("accepted");
  await expect(page.getByTestId("tool-create_entities")).toContainText("accepted");
  await screenshot(page, "mcp-server-accepted");
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, "mcp-server-accepted-390");
  await page.goto("/mcp-servers");
  await expect(page.getByRole("table", { name: "MCP servers" })).toContainText("9/9 accepted");
  await screenshot(page, "mcp-servers-list-390");
  expect(errors).toEqual([]);
  await context.close();
});

test("[MCP SERVERS]: a playground action calls the server; its write is approved from the queue", async ({
  browser,
}) => {
  const { page, context } = await adminContext(browser);
  const queue = await context.newPage();
  const code = [
    'import { create_entities, read_graph } from "toolstore/memory";',
    "export default async function () {",
    '  await create_entities({ entities: [{ name: "Oslo", entityType: "city", observations: ["capital of Norway"] }] });',
    "  return await read_graph({});",
    "}",
  ].join("\n");
  const saved = await page.evaluate(async (text) => {
    const res = await fetch("/api/trpc/playground.save", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ code: text, mode: "default" }),
    });
    return res.ok;
  }, code);
  expect(saved).toBe(true);
  await page.goto("/playground");
  await expect(page.locator(".monaco-editor .view-lines")).toContainText(/toolstore\/memory/, {
    timeout: 20_000,
  });
  await page.getByLabel("Mode", { exact: true }).selectOption("default");
  await queue.goto("/approvals");
  await page.getByRole("button", { name: "Run", exact: true }).click();

  const timeline = page.getByTestId("timeline");
  const write = timeline.locator('li[data-capability="memory.create_entities"]').last();
  await expect(write.getByTestId("decision")).toHaveText("waiting…");
  const card = queue.getByTestId("approval-card").filter({ hasText: "memory.create_entities" });
  await expect(card).toBeVisible();
  await expect(card).toContainText("write");
  await screenshot(queue, "mcp-approval-pending");
  await card.getByRole("button", { name: "Allow once" }).click();

  await expect(write.getByTestId("decision")).toHaveText("allowed");
  await expect(
    timeline.locator('li[data-capability="memory.read_graph"]').last().getByTestId("decision"),
  ).toHaveText("allowed");
  await expect(page.getByTestId("run-status")).toContainText("ok");
  await expect(page.getByTestId("pane-result")).toContainText("Oslo");
  await screenshot(page, "mcp-playground-finished");
  await context.close();
});
