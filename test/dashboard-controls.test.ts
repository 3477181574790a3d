// The endpoints panel's controls in Chromium (DESIGN §19): each control shown and edited (a PATCH
// of its JSON), a disabled endpoint shown with why and since when, and its Enable and Recover
// buttons working against a real server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { expectStatus } from "./helpers/assertions.ts";
import { launchBrowser, RESULTS, type TestBrowser } from "./helpers/browser.ts";
import { waitFor } from "./helpers/receiver.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let chromium: TestBrowser;
let page: Page;
let limited: string;
let stopped: string;

beforeAll(async () => {
  server = await startServer({}, { dispatch: false });
  limited = expectStatus(
    await server.request("POST", "/v1/endpoints", {
      url: "https://a.example.com/hook",
      description: "limited",
      rateLimit: { perSecond: 50, burst: 100 },
      retrySchedule: ["5s", "1m"],
      filter: [{ path: "/data/status", op: "eq", value: "approved" }],
    }),
    201,
  ).id;
  stopped = expectStatus(
    await server.request("POST", "/v1/endpoints", {
      url: "https://b.example.com/hook",
      description: "stopped",
    }),
    201,
  ).id;
  expectStatus(await server.request("PATCH", `/v1/endpoints/${stopped}`, { disabled: true }), 200);
  chromium = await launchBrowser();
  page = chromium.page;
  await page.goto(`${server.url}/`);
  await page.fill("#token", server.token);
  await page.click("#connect");
  await page.waitForSelector(`#endpoints tbody tr:has(code:text-is("${limited}"))`);
});

afterAll(async () => {
  await chromium?.browser.close();
  await server?.stop();
});

const row = (id: string) => `#endpoints tbody tr:has(code:text-is("${id}"))`;
const read = async (id: string) => expectStatus(await server.request("GET", `/v1/endpoints/${id}`), 200);

test("each control is shown; a disabled endpoint says why and since when, with Enable and Recover", async () => {
  const text = (await page.textContent(row(limited))) ?? "";
  expect(text).toContain("rate limit: 50/s, burst 100");
  expect(text).toContain("retry schedule: 5s, 1m");
  expect(text).toContain("disable after: 5d");
  expect(text).toContain("filter: 1 condition");
  const disabled = (await page.textContent(row(stopped))) ?? "";
  expect(disabled).toContain("disabled: by an operator");
  expect(disabled).toContain("since");
  expect(await page.isVisible(`${row(stopped)} button.enable`)).toBe(true);
  expect(await page.isVisible(`${row(stopped)} button.recover`)).toBe(true);
  expect(await page.isVisible(`${row(limited)} button.enable`)).toBe(false);
  await page.screenshot({ path: join(RESULTS, "dashboard-endpoint-controls.png"), fullPage: true });
  expect(chromium.pageErrors).toEqual([]);
});

test("editing the controls PATCHes them (null removes one)", async () => {
  await page.click(`${row(limited)} details.controls summary`);
  await page.fill(
    `${row(limited)} textarea.controls-json`,
    JSON.stringify({ rateLimit: { perSecond: 20, burst: 20 }, retrySchedule: null, disableAfter: "2d" }),
  );
  await page.click(`${row(limited)} button.save-controls`);
  await waitFor("the change stored", async () => (await read(limited)).disableAfter === "2d");
  expect(await read(limited)).toMatchObject({
    rateLimit: { perSecond: 20, burst: 20 },
    retrySchedule: null,
    disableAfter: "2d",
    filter: [{ path: "/data/status", op: "eq", value: "approved" }],
  });
  await page.waitForSelector(`${row(limited)}:has-text("rate limit: 20/s, burst 20")`);
  expect(chromium.pageErrors).toEqual([]);
});

test("Enable enables; Recover enables a disabled endpoint too", async () => {
  await page.click(`${row(stopped)} button.enable`);
  await waitFor("enabled", async () => (await read(stopped)).disabled === false);
  await page.waitForSelector(`${row(stopped)} .pill.ok, ${row(stopped)} .pill:text("no deliveries yet")`);
  expectStatus(await server.request("PATCH", `/v1/endpoints/${stopped}`, { disabled: true }), 200);
  await page.waitForSelector(`${row(stopped)} button.recover`, { timeout: 15_000 });
  await page.click(`${row(stopped)} button.recover`);
  await waitFor("recovered and enabled", async () => (await read(stopped)).disabled === false);
  expect(chromium.pageErrors).toEqual([]);
});
