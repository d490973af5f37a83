import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type BrowserContext, expect, type Locator, type Page, test } from "@playwright/test";
import { makePng } from "../server/core/testing/png";
import { ADMIN, adminContext, screenshot } from "./helpers";

/**
 * Approving from anywhere: the pre-flight manifest on a card, image arguments as
 * pictures, J/K and A/S/D from a fresh page load, "Allow for session" releasing a sibling request,
 * the history filter, and answering on a 390 px phone without anything scrolling sideways.
 * Gated calls come from a real MCP SDK client, so the card also names the client and the key.
 */
test.describe.configure({ mode: "serial" });

const CLIENT = { name: "h13-phone-agent", version: "2.3.4" };
const KEY_NAME = "e2e-anywhere";

/** A small PNG of one colour with a lighter square inside, so a preview is visibly an image. */
function png(width: number, height: number, rgb: [number, number, number]): string {
  const lighter = rgb.map((v) => Math.min(255, v + 110)) as [number, number, number];
  const inner = (x: number, y: number) =>
    x > width / 4 && x < (3 * width) / 4 && y > height / 4 && y < (3 * height) / 4;
  return makePng(width, height, (x, y) => (inner(x, y) ? lighter : rgb)).toString("base64");
}

/** An action that reads, then saves a picture: the save waits for a human. */
function saveAction(picture: string, label: string): string {
  return [
    'import { evaluate } from "toolstore/calculator";',
    'import { save } from "toolstore/assets";',
    "",
    "export default async function () {",
    '  const { value } = await evaluate({ expression: "6 * 7" });',
    `  const saved = await save({ name: "${label}", data_base64: "${picture}" });`,
    "  return { value, saved };",
    "}",
  ].join("\n");
}

let admin: { context: BrowserContext; page: Page };
let client: Client;

interface Envelope {
  ok: boolean;
  result?: unknown;
  calls: { capability: string; decision: string; reason?: string }[];
}

function execute(code: string, title: string): Promise<Envelope> {
  return client
    .callTool({ name: "execute_code", arguments: { code, title } }, undefined, { timeout: 120_000 })
    .then((r) => (r as unknown as { structuredContent: Envelope }).structuredContent);
}

function cardFor(page: Page, label: string): Locator {
  return page.getByTestId("approval-card").filter({ hasText: label });
}

/** Asserts the page does not scroll sideways; names the elements that stick out when it does. */
async function noSidewaysScroll(page: Page, soft = false) {
  const { doc, body, viewport, culprits } = await page.evaluate(() => {
    const viewport = window.innerWidth;
    const clipped = (el: Element) => {
      for (let p = el.parentElement; p; p = p.parentElement) {
        const o = getComputedStyle(p).overflowX;
        if (o === "auto" || o === "scroll" || o === "hidden") return true;
      }
      return false;
    };
    const culprits = [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > viewport + 0.5 && !clipped(el))
      .slice(0, 4)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()}.${[...el.classList].join(".")} (${Math.round(el.getBoundingClientRect().right)} px)`,
      );
    return {
      doc: document.documentElement.scrollWidth,
      body: document.body.scrollWidth,
      viewport,
      culprits,
    };
  });
  const check = soft ? expect.soft : expect;
  check(
    doc,
    `the document is no wider than the viewport; sticking out: ${culprits.join(", ")}`,
  ).toBeLessThanOrEqual(viewport);
  check(body).toBeLessThanOrEqual(viewport);
}

test.beforeAll(async ({ browser, baseURL }) => {
  admin = await adminContext(browser);
  const key = await admin.page.evaluate(async (name) => {
    const res = await fetch("/api/trpc/apiKeys.create", {
      method: "POST",
      headers: { "content-type": "application/json", "x-toolstore-csrf": "1" },
      body: JSON.stringify({ name, mode: "default", modules: ["*"] }),
    });
    return (await res.json()).result.data.key as string;
  }, KEY_NAME);
  client = new Client(CLIENT);
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/api/mcp", baseURL), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
});

test.afterAll(async () => {
  await client?.close();
  await admin?.context.close();
});

test("[APPROVALS]: the card shows the pre-flight manifest and the image argument as a picture", async () => {
  const picture = png(96, 64, [40, 90, 200]);
  const call = execute(saveAction(picture, "manifest-blue"), "manifest check");
  const page = admin.page;
  await page.goto("/approvals");
  const card = cardFor(page, "manifest-blue");
  await expect(card).toBeVisible();

  const manifest = card.getByTestId("manifest");
  await expect(manifest).toBeVisible();
  await expect(manifest.getByTestId("manifest-client")).toContainText(
    `MCP client ${CLIENT.name} ${CLIENT.version}`,
  );
  await expect(manifest.getByTestId("manifest-client")).toContainText(
    `key "${KEY_NAME}" of ${ADMIN.displayName}`,
  );
  await expect(manifest.getByTestId("manifest-imports")).toContainText("toolstore/calculator { evaluate }");
  await expect(manifest.getByTestId("manifest-imports")).toContainText("toolstore/assets { save }");
  const reach = manifest.getByTestId("manifest-reach");
  await expect(reach.locator(".reach-chip", { hasText: "assets.save" })).toContainText("write");
  await expect(reach.locator(".reach-chip", { hasText: "calculator.evaluate" })).toContainText("read");
  const calls = manifest.getByTestId("manifest-calls");
  await expect(calls.locator("li", { hasText: "calculator.evaluate" })).toContainText("allow");
  await expect(calls.locator("li", { hasText: "assets.save" })).toContainText("waiting");
  // The code is folded around the waiting call, which is highlighted on its line.
  const hit = manifest.getByTestId("manifest-code").locator(".code-line-hit");
  await expect(hit).toHaveCount(1);
  await expect(hit).toHaveAttribute("data-line", "6");
  await expect(hit).toContainText("await save(");
  await manifest.getByRole("button", { name: "Unfold" }).click();
  await expect(manifest.getByTestId("manifest-code").locator(".code-line")).toHaveCount(8);

  // The PNG argument is a picture, decoded from the snapshot, not a base64 blob.
  const img = card.getByTestId("approval-args").locator("img.img-preview");
  await expect(img).toBeVisible();
  await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.naturalWidth)).toBe(96);
  await screenshot(page, "h13-approvals-manifest-desktop");

  await card.getByRole("button", { name: /Allow once/ }).click();
  const envelope = await call;
  expect(envelope.ok).toBe(true);
  expect(envelope.calls.map((c) => `${c.capability}:${c.decision}`)).toEqual([
    "calculator.evaluate:allow",
    "assets.save:allow",
  ]);
});

test("[APPROVALS]: J/K and A/S/D answer from a fresh page load; focus follows to the next card", async () => {
  const first = execute(saveAction(png(32, 32, [200, 60, 60]), "keys-first"), "keys first");
  const page = admin.page;
  await page.goto("/approvals");
  await expect(cardFor(page, "keys-first")).toBeVisible();
  const second = execute(saveAction(png(32, 32, [60, 160, 60]), "keys-second"), "keys second");
  await expect(cardFor(page, "keys-second")).toBeVisible();

  // A fresh page load, nothing focused: the keyboard works on the queue straight away.
  await page.reload();
  const cards = page.getByTestId("approval-card");
  await expect(cardFor(page, "keys-second")).toBeVisible();
  await expect(page.locator("body")).toBeFocused();
  const ids = await cards.evaluateAll((els) => els.map((e) => e.id));
  const firstId = await cardFor(page, "keys-first").getAttribute("id");
  const secondId = await cardFor(page, "keys-second").getAttribute("id");
  const index = ids.indexOf(firstId ?? "");
  expect(index).toBeGreaterThanOrEqual(0);
  for (let i = 0; i <= index; i++) await page.keyboard.press("j");
  await expect(page.locator(`[id="${firstId}"]`)).toBeFocused();
  await page.keyboard.press("k");
  if (index > 0) await page.keyboard.press("j");
  await expect(page.locator(`[id="${firstId}"]`)).toBeFocused();
  await page.keyboard.press("a");
  // The focus moves to the card that took the answered one's place: the second request.
  await expect(page.locator(`[data-testid=approval-card][id="${secondId}"]`)).toBeFocused();
  await page.keyboard.press("d");
  const [a, d] = await Promise.all([first, second]);
  expect(a.ok).toBe(true);
  expect(d.calls.find((c) => c.capability === "assets.save")?.decision).toBe("deny");
  const history = page.getByTestId("approval-history");
  await expect(history.locator(`[id="${firstId}"]`)).toContainText("allowed once");
  await expect(history.locator(`[id="${secondId}"]`)).toContainText("denied");
});

test("[APPROVALS]: allow for session also releases the other waiting request of that session", async () => {
  const page = admin.page;
  await page.goto("/approvals");
  const one = execute(saveAction(png(24, 24, [120, 60, 180]), "sibling-one"), "sibling one");
  await expect(cardFor(page, "sibling-one")).toBeVisible();
  const two = execute(saveAction(png(24, 24, [180, 120, 40]), "sibling-two"), "sibling two");
  await expect(cardFor(page, "sibling-two")).toBeVisible();
  const twoId = await cardFor(page, "sibling-two").getAttribute("id");
  await screenshot(page, "h13-approvals-siblings");

  await cardFor(page, "sibling-one")
    .getByRole("button", { name: /Allow for session/ })
    .click();
  await expect(cardFor(page, "sibling-one")).toHaveCount(0);
  await expect(cardFor(page, "sibling-two")).toHaveCount(0);
  const [e1, e2] = await Promise.all([one, two]);
  expect(e1.ok).toBe(true);
  expect(e2.ok).toBe(true);
  expect(e2.calls.find((c) => c.capability === "assets.save")).toMatchObject({
    decision: "allow",
  });
  const history = page.getByTestId("approval-history");
  await expect(history.locator(`[id="${twoId}"]`)).toContainText("allowed by session grant");
  await expect(page.getByRole("region", { name: "Session grants" })).toContainText("assets.save");
  // Revoke, so later specs of this session ask again.
  await page
    .getByRole("region", { name: "Session grants" })
    .getByRole("button", { name: `Revoke session grants of key "${KEY_NAME}"` })
    .click();
});

test("[APPROVALS]: the history is in decision order and filters by decision, key and capability", async () => {
  const page = admin.page;
  await page.goto("/approvals");
  const history = page.getByTestId("approval-history");
  const rows = history.locator("tbody tr");
  await expect(rows.first()).toBeVisible();
  // The most recent decision (the session grant of the previous spec) comes first.
  await expect(rows.first()).toContainText(/allowed (for session|by session grant)/);

  const filters = page.getByRole("form", { name: "Filter history" });
  await filters.getByLabel("Decision").selectOption({ label: "denied" });
  await expect(rows.first()).toContainText("denied");
  for (const outcome of await history.getByTestId("history-outcome").allInnerTexts()) {
    expect(outcome).toBe("denied");
  }
  await filters.getByLabel("Key").selectOption({ label: KEY_NAME });
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText(`key "${KEY_NAME}"`);
  await screenshot(page, "h13-approvals-history-filtered");

  await filters.getByLabel("Decision").selectOption({ label: "All" });
  await filters.getByLabel("Capability").fill("calculator.*");
  await filters.getByLabel("Capability").press("Enter");
  await expect(page.getByText("No decisions match these filters")).toBeVisible();
  await filters.getByRole("button", { name: "Clear" }).click();
  await expect(rows.first()).toContainText(/allowed (for session|by session grant)/);
});

test("[APPROVALS]: a request made while the queue page loads shows without a reload", async () => {
  const page = admin.page;
  // Hold what the page sends on its live socket (the subscriptions' starts) until the request
  // exists: it then arrives between the page's render and its subscription, which must replay it
  // rather than start from "now". The server's messages pass as they come.
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const live = /\/api\/trpc(\?|$)/;
  let socketsHeld = 0;
  await page.routeWebSocket(live, (socket) => {
    socketsHeld += 1;
    const server = socket.connectToServer();
    socket.onMessage(async (message) => {
      await held;
      server.send(message);
    });
  });
  const pending = () =>
    page.evaluate(async () => {
      const res = await fetch("/api/trpc/approvals.pendingCount");
      return (await res.json()).result.data as number;
    });
  try {
    // The queue also refetches over HTTP once the page has hydrated (its server-rendered data is
    // stale at once). The request is made only after that refetch has answered: made before it,
    // it shows through that answer, not through the subscription this test is about (seen on a
    // slow CI machine, where hydration ended after the request existed).
    const hydrated = page.waitForResponse((r) => r.url().includes("approvals.queue"));
    await page.goto("/approvals");
    await hydrated;
    const before = await pending();
    const call = execute(saveAction(png(20, 20, [30, 140, 140]), "while-loading"), "while loading");
    await expect.poll(pending, { timeout: 20_000 }).toBe(before + 1);
    await expect(cardFor(page, "while-loading")).toHaveCount(0);
    expect(socketsHeld).toBeGreaterThan(0);
    release();
    const card = cardFor(page, "while-loading");
    await expect(card).toBeVisible();
    await card.getByRole("button", { name: /Allow once/ }).click();
    expect((await call).ok).toBe(true);
  } finally {
    release();
  }
});

test("[MOBILE]: an approver answers at 390x844; nothing scrolls sideways", async ({ browser }) => {
  const phone = await browser.newContext({
    viewport: { width: 390, height: 844 },
    storageState: await admin.context.storageState(),
    hasTouch: true,
    isMobile: true,
  });
  const page = await phone.newPage();
  const picture = png(160, 100, [20, 140, 120]);
  const picturePrefix = picture.slice(-40);
  const call = execute(saveAction(picture, "phone-teal"), "from a phone");
  await page.goto("/approvals");
  const card = cardFor(page, "phone-teal");
  await expect(card).toBeVisible();
  await noSidewaysScroll(page);
  // The sidebar is a menu.
  const menu = page.getByRole("button", { name: /Menu/ });
  await expect(menu).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Sections" })).toBeHidden();
  // The waiting call's line cuts the picture's base64, which the argument above shows as a
  // picture; a button shows it whole.
  const hit = card.locator(".code-line-hit");
  const cut = hit.getByRole("button", { name: /characters/ });
  await expect(cut).toBeVisible();
  expect((await hit.textContent())?.length ?? 0).toBeLessThan(200);
  expect((await hit.boundingBox())?.height ?? 0, "the call's line wraps to a few lines at most").toBeLessThan(
    120,
  );
  await screenshot(page, "h13-mobile-approvals");
  await cut.tap();
  await expect(hit).toContainText(picturePrefix);
  expect((await hit.textContent())?.length ?? 0).toBeGreaterThan(picture.length);
  await menu.click();
  await expect(page.getByRole("navigation", { name: "Sections" })).toBeVisible();
  await screenshot(page, "h13-mobile-menu");
  await menu.click();

  const allow = card.getByRole("button", { name: /Allow once/ });
  const box = await allow.boundingBox();
  expect(box?.height ?? 0, "a large touch target").toBeGreaterThanOrEqual(44);
  await allow.tap();
  expect((await call).ok).toBe(true);
  await expect(cardFor(page, "phone-teal")).toHaveCount(0);
  await noSidewaysScroll(page);

  // The run's page, on the phone.
  await page.getByTestId("approval-history").getByRole("link", { name: "run", exact: true }).first().click();
  await expect(page.getByRole("heading", { name: "from a phone" })).toBeVisible();
  await noSidewaysScroll(page);
  await screenshot(page, "h13-mobile-run");
  await phone.close();
});

test("[MOBILE]: no console page scrolls sideways at 390 px", async ({ browser }) => {
  const phone = await browser.newContext({
    viewport: { width: 390, height: 844 },
    storageState: await admin.context.storageState(),
  });
  const page = await phone.newPage();
  for (const [path, name] of [
    ["/", "dashboard"],
    ["/playground", "playground"],
    ["/runs", "runs"],
    ["/toolsets", "toolsets"],
    ["/toolsets/calculator", "toolset-calculator"],
    ["/capabilities", "capabilities"],
    ["/rules", "rules"],
    ["/keys", "keys"],
    ["/settings/users", "users"],
  ] as const) {
    await page.goto(path);
    await expect(page.locator("main h1").first()).toBeVisible();
    await screenshot(page, `h13-mobile-${name}`);
    await test.step(`${path} fits`, () => noSidewaysScroll(page, true));
  }
  await phone.close();
});

/** Replaces the playground editor's code (one line: nothing for auto-indent or auto-close to touch). */
async function setCode(page: Page, code: string) {
  await page.locator(".monaco-editor .view-lines").click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(code);
  await page.keyboard.press("Escape");
}

test("[PLAYGROUND]: refusals show in the timeline: validation names the field, a refused run its reason", async () => {
  const page = admin.page;
  await page.goto("/playground");
  await expect(page.locator(".monaco-editor .view-lines")).toBeVisible({ timeout: 20_000 });
  await setCode(
    page,
    'import { evaluate } from "toolstore/calculator"; export default async () => { try { await evaluate({ expression: 42 }); } catch (e) { return { error: e.error, fields: e.fields }; } };',
  );
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const refused = page.getByTestId("timeline").locator('li[data-capability="calculator.evaluate"]');
  await expect(refused.getByTestId("decision")).toHaveText("refused");
  await expect(refused).toContainText("expression must be string");
  await expect(page.getByTestId("pane-result")).toContainText("bad_input");
  await expect(page.getByTestId("pane-result")).toContainText('"field": "expression"');
  await screenshot(page, "h13-desktop-playground-invalid");

  await setCode(page, 'import { nope } from "toolstore/calculator"; export default async () => nope({});');
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await expect(page.getByTestId("timeline-refusal")).toContainText('has no export "nope"');
  await expect(page.getByText("No calls yet")).toHaveCount(0);
  await screenshot(page, "h13-desktop-playground-refused");

  // The run page of the first run, at desktop width: the manifest beside the decisions.
  await page.goto("/runs");
  await page.getByRole("link", { name: "from a phone" }).first().click();
  await expect(page.getByTestId("manifest")).toBeVisible();
  await expect(page.getByTestId("manifest-client")).toContainText(CLIENT.name);
  await screenshot(page, "h13-desktop-run");
});
