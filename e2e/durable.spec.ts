import { randomUUID } from "node:crypto";
import path from "node:path";
import { expect, type Page, test } from "@playwright/test";
import { E2E_PORT } from "../playwright.config";
import {
  freePort,
  kill9,
  mcpClient,
  type Receiver,
  type ServedProcess,
  spawnServer,
  startReceiver,
} from "../server/engine/testing/served-process";
import { adminContext } from "./helpers";

/**
 * Durable actions in the console (#31), seeded the real way: a second ToolStore server
 * (scripts/fault-serve.ts) on the e2e database runs an action that reads, then POSTs to a local
 * receiver; it is killed with SIGKILL while the POST is in flight. The console's own server sees
 * the dead instance, replays the run from its journal and parks it on an "uncertain" approval:
 * the card says the call may already have happened and asks whether to run it again (A/D, no
 * session grant), and the run page says it is parked, on which approval, and after the answer
 * which call came from the journal.
 */
test.describe.configure({ mode: "serial" });

/** The e2e server's database, as playwright.config.ts names it (served from the repository root). */
const DATABASE_URL = `file:${path.resolve(`.data/e2e-${E2E_PORT}.db`)}`;

let receiver: Receiver | undefined;
let doomed: ServedProcess | undefined;

test.afterAll(async () => {
  if (doomed) await kill9(doomed.child);
  await receiver?.close();
});

async function createAutoKey(page: Page, name: string): Promise<string> {
  return page.evaluate(async (keyName) => {
    const res = await fetch("/api/trpc/apiKeys.create", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ name: keyName, mode: "auto", modules: ["*"] }),
    });
    return (await res.json()).result.data.key as string;
  }, name);
}

test("[DURABLE]: a call that may already have happened asks to run it again, and the run page shows the replay", async ({
  browser,
}) => {
  test.setTimeout(180_000);
  const { page, context } = await adminContext(browser);
  const key = await createAutoKey(page, "e2e-durable");
  const trial = randomUUID().slice(0, 8);
  const title = `durable ${trial}`;

  receiver = await startReceiver();
  const target = receiver;
  doomed = await spawnServer(DATABASE_URL, await freePort(), { TOOLSTORE_HEARTBEAT_MS: "1000" });
  const server = doomed;
  // The POST has reached the receiver: the impl is in flight. Kill the server there.
  const killed = new Promise<void>((resolve) => {
    target.onHit = (t) => {
      if (t !== trial) return { hold: false };
      void kill9(server.child).then(resolve);
      return { hold: true };
    };
  });
  const client = await mcpClient(server.url, key, "e2e-durable");
  const code = `import { planning } from "toolstore/run";
import { fetch } from "toolstore/http";
export default async function () {
  const dry = await planning({});
  const r = await fetch({ url: "${target.url}/hit?trial=${trial}", method: "POST", body: "paid" });
  return { dry, status: r.status };
}`;
  const call = client
    .callTool({ name: "execute_code", arguments: { code, title } }, undefined, { timeout: 120_000 })
    .then(
      () => "answered",
      () => "failed",
    );
  await killed;
  doomed = undefined;
  await client.close().catch(() => undefined);
  expect(await call).toBe("failed");
  expect(target.hits.get(trial)).toBe(1);

  // The console's server takes the dead instance's run over (after its liveness timeout).
  await page.goto("/approvals");
  const card = page.getByTestId("approval-card").filter({ hasText: trial });
  await expect(card).toBeVisible({ timeout: 60_000 });
  await expect(card).toHaveAttribute("data-kind", "uncertain");
  await expect(card.getByRole("heading", { name: "This call may already have happened" })).toBeVisible();
  await expect(card.getByTestId("uncertain-note")).toContainText("check the target system", {
    ignoreCase: true,
  });
  await expect(card.locator(".approval-cap")).toHaveText("http.fetch");
  const again = card.getByRole("button", { name: "Run it again", exact: true });
  const dont = card.getByRole("button", { name: "Don't run it again", exact: true });
  await expect(again).toHaveAttribute("aria-keyshortcuts", "A");
  await expect(dont).toHaveAttribute("aria-keyshortcuts", "D");
  await expect(card.getByRole("button", { name: /Allow for session/ })).toHaveCount(0);
  await expect(card.getByRole("button", { name: /^Deny/ })).toHaveCount(0);
  const approvalId = await card.getAttribute("id");
  expect(approvalId).toBeTruthy();

  // The run page: parked on that approval, replayed once so far.
  await card.getByRole("link", { name: `run ${title}` }).click();
  await expect(page.getByRole("heading", { name: title })).toBeVisible();
  const runUrl = page.url();
  // It parks after the replay's hot window; the page follows it live (reload as a fallback).
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId("parked-note")).toBeVisible({ timeout: 2_000 });
  }).toPass({ timeout: 30_000 });
  await expect(page.getByRole("heading", { name: "Parked: waiting for a human" })).toBeVisible();
  await expect(page.getByTestId("run-replays")).toHaveText("resumed from its journal once");
  const waitingRow = page.getByTestId("timeline").locator("li", { hasText: "http.fetch" });
  await expect(waitingRow.getByTestId("decision")).toHaveText(/waiting/);
  await expect(waitingRow.getByTestId("uncertain-call")).toBeVisible();
  await expect(waitingRow.getByRole("button", { name: "Run it again", exact: true })).toBeVisible();
  const link = page.getByTestId("parked-approval");
  await expect(link).toHaveAttribute("href", `/approvals#${approvalId}`);

  // Back in the queue through that link; the keys answer the focused card: S does nothing, D ends it.
  await link.click();
  const linked = page.locator(`article[id="${approvalId}"]`);
  await expect(linked).toBeFocused();
  await expect(linked).toHaveAttribute("aria-keyshortcuts", "A D");
  await page.keyboard.press("s");
  await expect(linked).toBeVisible();
  await page.keyboard.press("d");
  await expect(linked).toHaveCount(0);
  const settled = page.locator(`tr[id="${approvalId}"]`);
  await expect(settled.getByTestId("history-outcome")).toHaveText("not run again");
  await expect(settled).toContainText("may already have happened");

  // The run ended without repeating the POST; the read came from the journal.
  await page.goto(runUrl);
  await expect(page.getByRole("heading", { name: title })).toBeVisible();
  await expect(async () => {
    await page.reload();
    await expect(page.locator(".page-head").getByText("ended", { exact: true })).toBeVisible({
      timeout: 2_000,
    });
  }).toPass({ timeout: 30_000 });
  await expect(page.getByTestId("parked-note")).toHaveCount(0);
  await expect(page.getByTestId("run-replays")).toHaveText("resumed from its journal 2 times");
  const timeline = page.getByTestId("timeline");
  await expect(timeline.locator("li", { hasText: "run.planning" }).getByTestId("from-journal")).toBeVisible();
  const fetchRow = timeline.locator("li", { hasText: "http.fetch" });
  await expect(fetchRow.getByTestId("from-journal")).toHaveCount(0);
  await expect(fetchRow).toContainText("not run again");
  expect(target.hits.get(trial)).toBe(1);
  await context.close();
});
