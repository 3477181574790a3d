// Headless Chromium for the dashboard tests: Debian's chromium driven by playwright-core, one
// page whose script errors and console errors are collected for the test to assert on.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

const CHROMIUM = process.env.OUTBOXD_CHROMIUM ?? "/usr/bin/chromium";
/** Where the dashboard tests write their screenshots. */
export const RESULTS = join(import.meta.dir, "..", "..", "test-results");

export interface TestBrowser {
  browser: Browser;
  page: Page;
  /** Script errors and console errors of the page so far (a test may empty it). */
  pageErrors: string[];
}

export async function launchBrowser(viewport = { width: 1360, height: 900 }): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `the dashboard test needs Chromium at ${CHROMIUM}: install Debian's package with ` +
        "`apt-get update && apt-get install -y chromium` (or set OUTBOXD_CHROMIUM to another binary)",
    );
  }
  mkdirSync(RESULTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = await browser.newPage({ viewport });
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") pageErrors.push(message.text());
  });
  return { browser, page, pageErrors };
}
