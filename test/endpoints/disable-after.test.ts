// disableAfter (DESIGN §19): a failing receiver's endpoint is disabled (reason failing) once both
// its failingSince is disableAfter old and 10 attempts failed since, not before; a 2xx clears
// failingSince; the outboxd.endpoint.disabled event reaches a subscribed endpoint, signed.
// OUTBOXD_ALLOW_FAILPOINTS=1 allows the short disableAfter these tests need.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { verifyWebhook } from "../../src/receiver/verify.ts";
import { expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
const receivers: TestReceiver[] = [];
beforeAll(async () => {
  server = await startServer({
    OUTBOXD_ALLOW_FAILPOINTS: "1",
    OUTBOXD_SEND_TIMEOUT: "2s",
    OUTBOXD_LEASE: "5s",
  });
});
afterAll(async () => {
  await server.stop();
  for (const receiver of receivers) await receiver.stop();
});

function receiver(respond?: TestReceiver["respond"]) {
  const r = startReceiver(respond);
  receivers.push(r);
  return r;
}

async function endpoint(body: Record<string, unknown>) {
  return expectStatus(await server.request("POST", "/v1/endpoints", body), 201) as {
    id: string;
    secret: string;
  };
}

async function read(id: string) {
  return expectStatus(await server.request("GET", `/v1/endpoints/${id}`), 200);
}

async function fail(id: string, aggregates: number, tag: string) {
  const events = Array.from({ length: aggregates }, (_, i) => ({
    type: "fail.x",
    aggregate: `${tag}/${i}`,
    endpoints: [id],
  }));
  expectStatus(await server.request("POST", "/v1/commits", { events }), 201);
}

test("many failures before disableAfter has passed do not disable; failures after it do, once, with the event", async () => {
  const watcher = receiver();
  const watch = await endpoint({ url: watcher.url, eventTypes: ["outboxd.endpoint.*"] });
  const failing = receiver(() => new Response("down", { status: 500 }));
  const { id } = await endpoint({
    url: failing.url,
    disableAfter: "3s",
    retrySchedule: ["1s"],
    description: "shop",
  });
  await fail(id, 12, `early-${id}`);
  await waitFor(
    "12 failures",
    async () => (await read(id)).failingSince !== null && failing.received.length >= 12,
  );
  const early = await read(id);
  // 12 failures, but failingSince is not yet 3 s old.
  expect(Date.now() - Date.parse(early.failingSince)).toBeLessThan(3_000);
  expect(early.disabled).toBe(false);
  const disabled = await waitFor("disabled as failing", async () => {
    const now = await read(id);
    return now.disabled && now;
  });
  expect(disabled.disabledReason).toBe("failing");
  expect(Date.parse(disabled.disabledAt) - Date.parse(disabled.failingSince)).toBeGreaterThanOrEqual(3_000);
  const event = await waitFor("the disabled event at the watcher", async () => {
    for (const request of watcher.received) {
      const verified = await verifyWebhook({ headers: request.headers, body: request.body }, watch.secret);
      if (verified.aggregate === `outboxd/endpoints/${id}`) return verified;
    }
    return undefined;
  });
  expect(event.type).toBe("outboxd.endpoint.disabled");
  expect(event.data).toMatchObject({
    endpointId: id,
    description: "shop",
    reason: "failing",
    failingSince: disabled.failingSince,
    lastError: expect.stringContaining("500"),
  });
  // Its deliveries wait (pending, their deadlines running).
  expect((await read(id)).pending).toBe(12);
});

test("disableAfter passed with fewer than 10 failures does not disable", async () => {
  const failing = receiver(() => new Response("down", { status: 503 }));
  const { id } = await endpoint({ url: failing.url, disableAfter: "1s", retrySchedule: ["1s"] });
  await fail(id, 1, `few-${id}`);
  await waitFor("4 failed attempts", () => failing.received.length >= 4, 30_000);
  const now = await read(id);
  expect(Date.now() - Date.parse(now.failingSince)).toBeGreaterThan(1_000);
  expect(now.disabled).toBe(false);
});

test("429 is not a failure, and a 2xx clears failingSince", async () => {
  let answer = 429;
  const flaky = receiver(() => new Response("", { status: answer }));
  const { id } = await endpoint({ url: flaky.url, disableAfter: "1s", retrySchedule: ["1s"] });
  await fail(id, 3, `flaky-${id}`);
  await waitFor("3 answers", () => flaky.received.length >= 3);
  expect((await read(id)).failingSince).toBeNull();
  answer = 500;
  await waitFor("failing", async () => (await read(id)).failingSince !== null);
  answer = 200;
  await waitFor("cleared by a 2xx", async () => (await read(id)).failingSince === null);
});
