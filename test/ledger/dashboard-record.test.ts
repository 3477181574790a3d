// The dashboard's record page in a real browser (Debian's chromium via playwright-core): reached
// from an event's aggregate (attempts and dead letters link it alike), it shows every version newest first with the change from the
// version before, who committed it, and the events each commit sent with their delivery status.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { apiClient } from "../helpers/api.ts";
import { expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const CHROMIUM = process.env.OUTBOXD_CHROMIUM ?? "/usr/bin/chromium";

let server: TestServer;
let receiver: TestReceiver;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`the dashboard test needs Chromium at ${CHROMIUM} (see test/dashboard.test.ts)`);
  server = await startServer();
  receiver = startReceiver();
  expectStatus(
    await server.request("POST", "/v1/endpoints", { url: receiver.url, eventTypes: ["return.*"] }),
    201,
  );
  const writer = expectStatus(
    await server.request("POST", "/v1/tokens", { name: "returns-service", scopes: ["commit"] }),
    201,
  );
  const service = apiClient(server.url, writer.token);
  expectStatus(
    await service("POST", "/v1/commits", {
      records: [{ collection: "returns", id: "r-9", data: { status: "open", items: 2 } }],
      events: [{ type: "return.opened", payload: {} }],
    }),
    201,
  );
  expectStatus(
    await service("POST", "/v1/commits", {
      records: [
        {
          collection: "returns",
          id: "r-9",
          expectedVersion: 1,
          data: { status: "approved", items: 2, by: "u-1" },
        },
      ],
      events: [{ type: "return.approved", payload: {} }],
    }),
    201,
  );
  // One that dies at once: the dead letter links to the record.
  expectStatus(
    await server.request("POST", "/v1/commits", {
      records: [{ collection: "returns", id: "r-9", expectedVersion: 2, delete: true }],
      events: [{ type: "audit.closed", aggregate: "returns/r-9", payload: {}, endpoints: [] }],
    }),
    201,
  );
  await waitFor("both return events delivered", async () => {
    const stats = expectStatus(await server.request("GET", "/v1/stats"), 200);
    return stats.deliveredLastHour === 2;
  });

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu"],
  });
  page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  page.on("pageerror", (error) => pageErrors.push(error.message));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await receiver?.stop();
});

test("a record's page: versions newest first, the diff, who, and what each commit sent with its delivery status", async () => {
  await page.goto(`${server.url}/`);
  await page.fill("#token", server.token);
  await page.click("#connect");
  await page.waitForSelector("#app:not([hidden])");
  expect(await page.isVisible("#record")).toBe(false);

  // Attempts link an event's aggregate to its record.
  await page.waitForSelector("#attempts a.record-link");
  await page.click("#attempts a.record-link >> nth=0");
  await page.waitForSelector("#record:not([hidden]) #record-history tbody tr");
  expect(await page.textContent("#record-name")).toBe("returns/r-9");
  const rows = page.locator("#record-history tbody tr");
  expect(await rows.count()).toBe(3);
  const [v3, v2, v1] = [
    await rows.nth(0).textContent(),
    await rows.nth(1).textContent(),
    await rows.nth(2).textContent(),
  ];
  expect(v3).toContain("v3");
  expect(v3).toContain("deleted");
  expect(v3).toContain("OUTBOXD_ADMIN_TOKEN");
  expect(v3).toContain("audit.closed");
  expect(v3).toContain("no endpoint");
  expect(v2).toContain("returns-service");
  expect(v2).toContain('~ /status: "open" → "approved"');
  expect(v2).toContain('+ /by: "u-1"');
  expect(v2).toContain("return.approved");
  expect(v2).toContain("delivered");
  expect(v1).toContain("created");
  expect(v1).toContain("return.opened");

  // Closing the page goes back to the overview.
  await page.click("#record a[href='#']");
  await page.waitForSelector("#record", { state: "hidden" });
  // A record that never existed says so.
  await page.goto(`${server.url}/#/records/returns/nope`);
  await page.waitForFunction(() =>
    document.querySelector("#record-history")?.textContent?.includes("never existed"),
  );
  expect(pageErrors).toEqual([]);
});
