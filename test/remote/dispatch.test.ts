// The dispatcher on a real libSQL server (sqld on 127.0.0.1): the next event of an aggregate is
// claimed as soon as the outcome before it is written, not at the next sweep. (The remote write
// path cannot answer the heads a batch of outcomes promotes, so the dispatcher scans for them.)
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";

let sqld: Sqld;
let server: TestServer;
let receiver: TestReceiver;

beforeAll(async () => {
  sqld = await startSqld();
  receiver = startReceiver();
  // A sweep once an hour: only the dispatcher's own wake-ups can deliver within the test.
  server = await startServer({ OUTBOXD_DATABASE_URL: sqld.url, OUTBOXD_DISPATCH_CRON: "0 * * * *" });
});

afterAll(async () => {
  await server?.stop();
  await receiver?.stop();
  await sqld?.stop();
});

test("an aggregate's events are delivered one after the other without waiting for the sweep", async () => {
  const endpoint = await server.request("POST", "/v1/endpoints", {
    url: receiver.url,
    secret: `whsec_${Buffer.alloc(24, 5).toString("base64")}`,
  });
  expect(endpoint.status).toBe(201);
  // Five events of one aggregate in one commit: each after the first waits for its predecessor.
  const events = Array.from({ length: 5 }, (_, i) => ({
    type: "order.changed",
    aggregate: "orders/o-1",
    payload: { i },
  }));
  expect((await server.request("POST", "/v1/commits", { events })).status).toBe(201);
  await waitFor("five deliveries", () => receiver.received.length >= 5, 15_000);
  expect(receiver.received.map((r) => (JSON.parse(r.body) as { sequence: number }).sequence)).toEqual([
    1, 2, 3, 4, 5,
  ]);
});
