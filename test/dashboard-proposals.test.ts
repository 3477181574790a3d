// The proposals panel of the dashboard (DESIGN §10), in a real browser (Debian's chromium driven
// by playwright-core): an agent proposes over HTTP, a person sees the summary, the proposer, the
// diff and the events, approves in the page with a reason, and the webhook arrives at a real
// receiver. A screenshot goes to test-results/.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { apiClient, type Request } from "./helpers/api.ts";
import { expectStatus } from "./helpers/assertions.ts";
import { launchBrowser, RESULTS } from "./helpers/browser.ts";
import { startReceiver, type TestReceiver, waitFor } from "./helpers/receiver.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let receiver: TestReceiver;
let browser: Browser;
let page: Page;
let agent: Request;
let personToken = "";
let pageErrors: string[] = [];

beforeAll(async () => {
  server = await startServer();
  receiver = startReceiver();
  expectStatus(
    await server.request("POST", "/v1/endpoints", { url: receiver.url, eventTypes: ["return.*"] }),
    201,
  );
  const token = async (name: string, scopes: string[]) =>
    expectStatus(await server.request("POST", "/v1/tokens", { name, scopes }), 201).token as string;
  agent = apiClient(server.url, await token("returns-agent", ["propose"]));
  personToken = await token("alice", ["approve", "read"]);
  expectStatus(
    await server.request("PUT", "/v1/records/returns/r-123", {
      data: { status: "requested", customer: "c-9", reason: "wrong size" },
    }),
    201,
  );

  ({ browser, page, pageErrors } = await launchBrowser({ width: 1360, height: 1000 }));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await receiver?.stop();
});

test("propose over HTTP, approve in the page, the webhook arrives", async () => {
  const proposal = expectStatus(
    await agent("POST", "/v1/proposals", {
      summary: "Approve return r-123: item arrived unused, within 30 days.",
      commit: {
        records: [
          {
            collection: "returns",
            id: "r-123",
            expectedVersion: 1,
            data: { status: "approved", customer: "c-9", refund: 1999 },
          },
        ],
        events: [{ type: "return.approved", payload: { returnId: "r-123", refund: 1999 } }],
      },
    }),
    201,
  );

  await page.goto(`${server.url}/`);
  await page.fill("#token", personToken);
  await page.click("#connect");
  const card = page.locator(`article.proposal[data-proposal="${proposal.id}"]`);
  await card.waitFor();

  // What the person decides on: summary, proposer, diff field by field, the events.
  expect(await card.locator("h3").textContent()).toBe(proposal.summary);
  expect(await card.textContent()).toContain("returns-agent");
  const field = (name: string) => card.locator(`tr[data-field="returns/r-123.${name}"]`);
  expect(await field("status").getAttribute("class")).toBe("changed");
  expect(await field("status").locator("td.was").textContent()).toBe('"requested"');
  expect(await field("status").locator("td.will").textContent()).toBe('"approved"');
  expect(await field("customer").getAttribute("class")).toBe("same");
  expect(await field("reason").locator("td.will").textContent()).toBe("–");
  expect(await field("refund").locator("td.was").textContent()).toBe("–");
  expect(await field("refund").locator("td.will").textContent()).toBe("1999");
  const events = await card.locator("ul.events").textContent();
  expect(events).toContain("return.approved");
  expect(events).toContain('"refund":1999');
  expect(receiver.received).toHaveLength(0);
  await page.screenshot({ path: join(RESULTS, "dashboard-proposals.png"), fullPage: true });

  await card.locator("input.reason").fill("photos checked, refund ok");
  await card.locator("button.approve").click();
  await page.waitForSelector(`article.proposal[data-proposal="${proposal.id}"]`, { state: "detached" });

  const webhook = await waitFor("the webhook at the receiver", () => receiver.received[0]);
  const body = JSON.parse(webhook.body);
  expect(body).toMatchObject({
    type: "return.approved",
    aggregate: "returns/r-123",
    sequence: 1,
    data: { returnId: "r-123", refund: 1999 },
  });
  expect(webhook.headers.get("webhook-signature")).toStartWith("v1,");

  const decided = expectStatus(await agent("GET", `/v1/proposals/${proposal.id}`), 200);
  expect(decided).toMatchObject({
    status: "approved",
    decidedBy: { tokenName: "alice" },
    reason: "photos checked, refund ok",
  });
  const record = expectStatus(await server.request("GET", "/v1/records/returns/r-123"), 200);
  expect(record).toMatchObject({ version: 2, data: { status: "approved", customer: "c-9", refund: 1999 } });
  expect(pageErrors).toEqual([]);
});

test("the proposer's own token is refused in the page, and the proposal stays pending", async () => {
  const proposal = expectStatus(
    await server.request("POST", "/v1/proposals", {
      summary: "Admin proposes, admin may not approve",
      commit: { events: [{ type: "return.noted", aggregate: "returns/r-9" }] },
    }),
    201,
  );
  await page.evaluate(() => sessionStorage.clear());
  await page.goto(`${server.url}/`);
  await page.fill("#token", server.token);
  await page.click("#connect");
  const card = page.locator(`article.proposal[data-proposal="${proposal.id}"]`);
  await card.waitFor();
  await card.locator("button.approve").click();
  await page.waitForFunction(() => document.getElementById("toast")?.textContent?.includes("another token"));
  expect(expectStatus(await server.request("GET", `/v1/proposals/${proposal.id}`), 200).status).toBe(
    "pending",
  );
  // The browser logs the refused request itself ("Failed to load resource: … 403").
  expect(pageErrors.every((e) => e.includes("403"))).toBe(true);
});

test("the card hides nothing: long values in full, every event field, hidden characters as escapes", async () => {
  const long = `start-${"x".repeat(2000)}-end`;
  const eventId = crypto.randomUUID();
  const day = (n: number) => new Date(Math.floor(Date.now() / 1000) * 1000 + n * 86_400_000).toISOString();
  const [after, by] = [day(1), day(2)];
  pageErrors.length = 0;
  const endpoint = expectStatus(
    await server.request("POST", "/v1/endpoints", { url: `${receiver.url}/other`, eventTypes: ["refund.*"] }),
    201,
  ).id as string;
  const proposal = expectStatus(
    await agent("POST", "/v1/proposals", {
      summary: "Refund r-7 \u202E00.01 EUR\u200B",
      commit: {
        records: [
          {
            collection: "refunds",
            id: "r-7",
            expectedVersion: 0,
            data: { amount: "\u202E00.01", note: long },
          },
        ],
        events: [
          {
            id: eventId,
            type: "refund.issued",
            aggregate: "refunds/r-7",
            endpoints: [endpoint],
            deliverAfter: after,
            deliverBy: by,
            payload: { amount: "\u202E00.01", note: long, zero: "a\u200Db\uFEFF" },
          },
          { type: "refund.noted" },
        ],
      },
    }),
    201,
  );
  await page.evaluate(() => sessionStorage.clear());
  await page.goto(`${server.url}/`);
  await page.fill("#token", personToken);
  await page.click("#connect");
  const card = page.locator(`article.proposal[data-proposal="${proposal.id}"]`);
  await card.waitFor();

  // Hidden characters are shown as escapes, marked, in the summary, the diff and the payload.
  expect(await card.locator("h3").textContent()).toBe("Refund r-7 \\u202E00.01 EUR\\u200B");
  const amount = card.locator('tr[data-field="refunds/r-7.amount"] td.will');
  expect(await amount.textContent()).toBe('"\\u202E00.01"');
  expect(await amount.locator("span.escape").getAttribute("title")).toBe("U+202E");
  const cardText = (await card.textContent()) as string;
  expect(cardText).not.toContain("\u202E");
  expect(cardText).not.toContain("\u200B");
  expect(cardText).not.toContain("\u200D");

  // A long value is there in full, and wraps inside the card instead of running off it.
  const note = card.locator('tr[data-field="refunds/r-7.note"] td.will code');
  expect(await note.textContent()).toBe(JSON.stringify(long));
  const [noteBox, cardBox] = [await note.boundingBox(), await card.boundingBox()];
  expect((noteBox?.x ?? 0) + (noteBox?.width ?? 0)).toBeLessThanOrEqual(
    (cardBox?.x ?? 0) + (cardBox?.width ?? 0),
  );
  expect(await note.isVisible()).toBe(true);

  // Every field of every event, given or what its absence means.
  const first = card.locator('li[data-event="0"]');
  const field = (event: typeof first, name: string) =>
    event.locator(`dd[data-field="${name}"]`).textContent();
  expect(await field(first, "type")).toBe('"refund.issued"');
  expect(await field(first, "id")).toBe(JSON.stringify(eventId));
  expect(await field(first, "aggregate")).toBe('"refunds/r-7"');
  expect(await field(first, "endpoints")).toBe(JSON.stringify([endpoint]));
  expect(await field(first, "deliverAfter")).toBe(JSON.stringify(after));
  expect(await field(first, "deliverBy")).toBe(JSON.stringify(by));
  const payload = (await field(first, "payload")) as string;
  expect(payload).toContain('"amount":"\\u202E00.01"');
  expect(payload).toContain(JSON.stringify(long));
  expect(payload).toContain('"zero":"a\\u200Db\\uFEFF"');
  const second = card.locator('li[data-event="1"]');
  expect(await field(second, "id")).toContain("new id");
  expect(await field(second, "endpoints")).toContain("every endpoint");
  expect(await field(second, "deliverAfter")).toContain("at once");
  expect(await field(second, "aggregate")).toContain("record's aggregate");

  await card.screenshot({ path: join(RESULTS, "dashboard-proposal-card.png") });
  expect(pageErrors).toEqual([]);
});
