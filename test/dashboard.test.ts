// The dashboard at GET / (DESIGN §3), in a real browser: Debian's chromium driven by
// playwright-core. A known workload (three delivered, one dead past its deadline, one pending
// at a failing receiver) must show up as numbers, endpoints with their health, attempts and a
// chart; Replay on the dead letter, once the receiver is fixed, must deliver it. Screenshots go
// to test-results/.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { expectStatus } from "./helpers/assertions.ts";
import { launchBrowser, RESULTS } from "./helpers/browser.ts";
import { startReceiver, type TestReceiver, waitFor } from "./helpers/receiver.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let good: TestReceiver;
let bad: TestReceiver;
let browser: Browser;
let page: Page;
let pageErrors: string[] = [];
const ids = { orders: "", invoices: "", dead: "", pending: "" };

const fail = () => new Response("upstream exploded", { status: 500 });

beforeAll(async () => {
  // Retries capped at 3 s, not less: the failing receiver's attempts must not push the three
  // order.placed attempts out of the 25 newest the page shows while a busy machine runs the test.
  server = await startServer({ OUTBOXD_RETRY_BASE: "50ms", OUTBOXD_RETRY_CAP: "3s" });
  good = startReceiver();
  bad = startReceiver(fail);

  const endpoint = async (url: string, eventTypes: string[], description: string) =>
    expectStatus(await server.request("POST", "/v1/endpoints", { url, eventTypes, description }), 201).id;
  ids.orders = await endpoint(good.url, ["order.*"], "orders service");
  ids.invoices = await endpoint(`${bad.url}?key=hunter2`, ["invoice.*"], "billing");

  for (const id of ["o-1", "o-2", "o-3"]) {
    expectStatus(
      await server.request("POST", "/v1/commits", {
        records: [{ collection: "orders", id, data: { total: 10 } }],
        events: [{ type: "order.placed", payload: { id } }],
      }),
      201,
    );
  }
  const invoice = async (id: string, deliverWithin: string) =>
    expectStatus(
      await server.request("POST", "/v1/commits", {
        records: [{ collection: "invoices", id, data: { amount: 5 } }],
        events: [{ type: "invoice.issued", payload: { id }, deliverWithin }],
      }),
      201,
    ).events[0].deliveries[0].id;
  ids.dead = await invoice("i-1", "1s");
  ids.pending = await invoice("i-2", "1h");

  await waitFor("the workload to settle: 3 delivered, 1 dead, 1 pending", async () => {
    const stats = expectStatus(await server.request("GET", "/v1/stats"), 200);
    return stats.deliveredLastHour === 3 && stats.dead === 1 && stats.pending === 1;
  });

  ({ browser, page, pageErrors } = await launchBrowser());
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await good?.stop();
  await bad?.stop();
});

const text = async (selector: string) => ((await page.textContent(selector)) ?? "").trim();
const rows = (table: string) => page.locator(`#${table} tbody tr`);

describe("dashboard", () => {
  test("is public, and asks for a token", async () => {
    const response = await page.goto(`${server.url}/`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("connect-src 'self'");
    await page.waitForSelector("#login:not([hidden])");
    expect(await page.isVisible("#app")).toBe(false);
  });

  test("a wrong token is refused and nothing is kept", async () => {
    await page.fill("#token", "otk_not-a-real-token");
    await page.click("#connect");
    await page.waitForFunction(() =>
      document.getElementById("login-message")?.textContent?.includes("refused"),
    );
    expect(await page.isVisible("#app")).toBe(false);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    // The browser logs the refused request itself ("Failed to load resource: … 401").
    expect(pageErrors.every((e) => e.includes("401"))).toBe(true);
    pageErrors.length = 0;
  });

  test("shows the workload: numbers, dead letters, endpoints with health, attempts, chart", async () => {
    await page.fill("#token", server.token);
    await page.click("#connect");
    await page.waitForSelector("#app:not([hidden])");
    await page.waitForSelector("#dead-letters tbody button.replay");

    expect(await text("#stat-pending-value")).toBe("1");
    expect(await text("#stat-dead-value")).toBe("1");
    expect(await text("#stat-deadline-value")).toBe("1");
    expect(await text("#stat-delivered-value")).toBe("3");
    expect(await text("#stat-oldest-value")).toMatch(/^\d+ s$/);
    expect(await text("#stat-pending-sub")).toMatch(/in flight/);

    // Dead letters: the one invoice, with its reason and a Replay button.
    expect(await rows("dead-letters").count()).toBe(1);
    const dead = await text("#dead-letters tbody tr");
    expect(dead).toContain(ids.dead);
    expect(dead).toContain("invoice.issued");
    expect(dead).toContain("invoices/i-1 #1");
    expect(dead).toContain("deadline_exceeded");
    expect(dead).toContain("500");

    // Endpoints: both, with their health; the query string of a URL is not shown (it may hold a key).
    expect(await rows("endpoints").count()).toBe(2);
    const orders = await text(`#endpoints tbody tr:has(code:text-is("${ids.orders}"))`);
    expect(orders).toContain("healthy");
    expect(orders).toContain(good.url);
    expect(orders).toContain("orders service");
    const invoices = await text(`#endpoints tbody tr:has(code:text-is("${ids.invoices}"))`);
    expect(invoices).toContain("failing");
    expect(invoices).toContain(`${bad.url}?…`);
    expect(invoices).not.toContain("hunter2");
    expect(invoices).toContain("never"); // no success yet

    // Recent attempts: the three 200s and failures, newest first.
    expect(await rows("attempts").count()).toBeGreaterThanOrEqual(5);
    const attempts = await text("#attempts tbody");
    expect(attempts).toContain("order.placed");
    expect(attempts).toContain("upstream exploded");

    // The chart: a bar per minute of the last hour, three deliveries in all.
    expect(await page.locator("#chart svg rect.bar").count()).toBe(60);
    expect(await text("#chart-total")).toBe("3 delivered in the last hour");

    // The token is in this tab's sessionStorage only, never on the page.
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual(["outboxd.dashboard.token"]);
    expect(await page.content()).not.toContain(server.token);
    expect(await page.inputValue("#token")).toBe("");

    await page.screenshot({ path: join(RESULTS, "dashboard.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
  });

  test("endpoints and deliveries read by name: a description or URL host, an event type and aggregate", async () => {
    const attempts = await text("#attempts tbody");
    expect(attempts).toContain("orders service");
    expect(attempts).toContain("billing");
    // Ids stay on hover, not in the text.
    expect(attempts).not.toContain(ids.orders);
    expect(await page.getAttribute(`#attempts tbody span.endpoint[title="${ids.orders}"]`, "title")).toBe(
      ids.orders,
    );
    expect(await text("#dead-letters tbody tr")).toContain("billing");
    expect(await text(`#endpoints tbody tr:has(code:text-is("${ids.orders}"))`)).toContain("orders service");
    expect(pageErrors).toEqual([]);
  });

  test("layout at 1,400 px: every table fits its card, and the record panel has room below it", async () => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.goto(`${server.url}/#/records/orders/o-1`);
    await page.waitForSelector("#record-history tbody tr");
    await page.waitForSelector("#attempts tbody tr");
    const overflow = await page.evaluate(() =>
      ["attempts", "endpoints", "dead-letters", "record-history"].map((id) => {
        const table = document.getElementById(id) as HTMLElement;
        const card = table.closest("section") as HTMLElement;
        const style = getComputedStyle(card);
        const inner =
          card.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight);
        return { id, over: Math.ceil(table.getBoundingClientRect().width - inner) };
      }),
    );
    expect(overflow).toEqual([
      { id: "attempts", over: 0 },
      { id: "endpoints", over: 0 },
      { id: "dead-letters", over: 0 },
      { id: "record-history", over: 0 },
    ]);
    const gap = await page.evaluate(
      () =>
        (document.querySelector(".cards") as HTMLElement).getBoundingClientRect().top -
        (document.getElementById("record") as HTMLElement).getBoundingClientRect().bottom,
    );
    expect(gap).toBeGreaterThanOrEqual(12);
    await page.screenshot({ path: join(RESULTS, "dashboard-1400.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
  });

  test("at 420 px the page does not scroll sideways: wide tables scroll inside their cards", async () => {
    await page.setViewportSize({ width: 420, height: 900 });
    await page.goto(`${server.url}/#/records/orders/o-1`);
    await page.waitForSelector("#record-history tbody tr");
    const widths = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      cards: Math.max(
        ...[...document.querySelectorAll(".card, section.panel")].map((n) => n.getBoundingClientRect().right),
      ),
    }));
    expect(widths.page).toBeLessThanOrEqual(420);
    expect(widths.cards).toBeLessThanOrEqual(420);
    await page.screenshot({ path: join(RESULTS, "dashboard-420.png"), fullPage: true });
    await page.setViewportSize({ width: 1360, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  test("an aggregate with events but no record lists its events instead of 'never existed'", async () => {
    expectStatus(
      await server.request("POST", "/v1/commits", {
        events: [{ type: "job.started", aggregate: "jobs/j-1", payload: {} }],
      }),
      201,
    );
    await page.goto(`${server.url}/#/records/jobs/j-1`);
    await page.waitForFunction(() =>
      document.querySelector("#record-history")?.textContent?.includes("job.started"),
    );
    const shown = await text("#record-history");
    expect(shown).toContain("No record by this name");
    expect(shown).not.toContain("never existed");
    await page.goto(`${server.url}/#/records/jobs/nope`);
    await page.waitForFunction(() =>
      document.querySelector("#record-history")?.textContent?.includes("never existed"),
    );
    await page.goto(`${server.url}/#`);
    await page.waitForSelector("#record", { state: "hidden" });
    // The browser logs the record lookups' 404s itself ("Failed to load resource: … 404").
    expect(pageErrors.every((e) => e.includes("404"))).toBe(true);
    pageErrors.length = 0;
  });

  test("Replay on the dead letter, once the receiver is fixed, delivers it", async () => {
    bad.respond = () => new Response('{"result":"applied"}', { status: 200 });
    await page.click(`#dead-letters button[data-delivery="${ids.dead}"]`);
    await page.waitForFunction(() =>
      document.getElementById("toast")?.textContent?.includes("pending again"),
    );
    await waitFor("the replayed delivery to be delivered", async () => {
      const delivery = expectStatus(await server.request("GET", `/v1/deliveries/${ids.dead}`), 200);
      return delivery.status === "delivered";
    });
    await waitFor("the pending invoice to be delivered", async () => {
      const delivery = expectStatus(await server.request("GET", `/v1/deliveries/${ids.pending}`), 200);
      return delivery.status === "delivered";
    });
    await page.click("#refresh");
    await page.waitForFunction(
      () => document.getElementById("stat-delivered-value")?.textContent === "5",
      undefined,
      { timeout: 20_000 },
    );
    expect(await text("#stat-dead-value")).toBe("0");
    expect(await text("#stat-pending-value")).toBe("0");
    expect(await text("#dead-letters tbody")).toBe("No dead letters.");
    const invoices = await text(`#endpoints tbody tr:has(code:text-is("${ids.invoices}"))`);
    expect(invoices).toContain("healthy");
    expect(await text("#chart-total")).toBe("5 delivered in the last hour");
    // The receiver got the dead letter's event at last.
    expect(bad.received.some((r) => r.headers.get("webhook-id") !== null && r.body.includes('"i-1"'))).toBe(
      true,
    );
    await page.screenshot({ path: join(RESULTS, "dashboard-after-replay.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
  });

  test("Forget token clears it from the tab", async () => {
    await page.click("#logout");
    await page.waitForSelector("#login:not([hidden])");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.reload();
    await page.waitForSelector("#login:not([hidden])");
    expect(await page.isVisible("#app")).toBe(false);
  });
});
