import fs from "node:fs";
import path from "node:path";
import { defineConfig } from "@playwright/test";

/**
 * The e2e suite runs against the built app (`next start` through scripts/start.ts) on its own
 * port and its own SQLite file, in Debian's Chromium — never a downloaded browser.
 */
const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!fs.existsSync(chromium)) {
  console.error(
    `e2e: Chromium not found at ${chromium}; install it with \`apt-get install -y chromium\` or set CHROMIUM_PATH`,
  );
  process.exit(1);
}

export const E2E_PORT = Number(process.env.E2E_PORT ?? 3107);
export const E2E_SETUP_TOKEN = "e2e-setup-token-0123456789";
/** A local stand-in for the plan's weather API: the server sends api.openweathermap.org here. */
export const E2E_WEATHER_PORT = E2E_PORT + 11;
const dbFile = path.resolve(`.data/e2e-${E2E_PORT}.db`);

export default defineConfig({
  testDir: "e2e",
  // The foundation spec starts from an empty database (first-run setup); everything else after it.
  projects: [
    { name: "first-run", testMatch: /foundation\.spec\.ts/ },
    { name: "console", testIgnore: /foundation\.spec\.ts/, dependencies: ["first-run"] },
  ],
  fullyParallel: false,
  workers: 1,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  retries: 0,
  reporter: [["list"], ["html", { open: "never", outputFolder: "playwright-report" }]],
  outputDir: "test-results",
  use: {
    baseURL: `http://127.0.0.1:${E2E_PORT}`,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: chromium,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: {
    command: "npx tsx e2e/serve.ts",
    url: `http://127.0.0.1:${E2E_PORT}/signin`,
    // The line a user waits for: npm start once got this far without announcing itself.
    wait: { stdout: /ToolStore is serving/ },
    timeout: 240_000,
    reuseExistingServer: false,
    stdout: "pipe",
    env: {
      PORT: String(E2E_PORT),
      HOST: "127.0.0.1",
      DATABASE_URL: `file:${dbFile}`,
      TOOLSTORE_SETUP_TOKEN: E2E_SETUP_TOKEN,
      TOOLSTORE_APPROVAL_TTL_MINUTES: "5",
      TOOLSTORE_EGRESS_ALIASES: `api.openweathermap.org=http://127.0.0.1:${E2E_WEATHER_PORT}`,
    },
  },
});
