// Endpoint controls on a real libSQL server (sqld on 127.0.0.1): the operations they add run on
// the remote write path (a returning write only last, reads before writes): a rate-limited
// endpoint is delivered to through its bucket, a 410 disables its endpoint with the system event,
// PATCH and recover commit theirs, a filter applies, and the ledger verifies.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";

let sqld: Sqld;
let server: TestServer;
const receivers: TestReceiver[] = [];
beforeAll(async () => {
  sqld = await startSqld();
  server = await startServer({ OUTBOXD_DATABASE_URL: sqld.url });
});
afterAll(async () => {
  await server?.stop();
  for (const r of receivers) await r.stop();
  await sqld?.stop();
});

function receiver(respond?: TestReceiver["respond"]) {
  const r = startReceiver(respond);
  receivers.push(r);
  return r;
}

test("rate limit, filter, 410, PATCH and recover work on sqld, and the ledger verifies", async () => {
  const watcher = receiver();
  expectStatus(
    await server.request("POST", "/v1/endpoints", { url: watcher.url, eventTypes: ["outboxd.*"] }),
    201,
  );
  const limitedReceiver = receiver();
  const limited = expectStatus(
    await server.request("POST", "/v1/endpoints", {
      url: limitedReceiver.url,
      eventTypes: ["r.*"],
      rateLimit: { perSecond: 20, burst: 5 },
      filter: [{ path: "/data/keep", op: "eq", value: true }],
    }),
    201,
  );
  const gone = expectStatus(
    await server.request("POST", "/v1/endpoints", {
      url: receiver(() => new Response("", { status: 410 })).url,
      eventTypes: ["g.*"],
    }),
    201,
  );
  const events = Array.from({ length: 20 }, (_, i) => ({
    type: "r.x",
    aggregate: `r/${i % 4}`,
    payload: { keep: i % 2 === 0 },
  }));
  expectStatus(await server.request("POST", "/v1/commits", { events }), 201);
  expectStatus(
    await server.request("POST", "/v1/commits", { events: [{ type: "g.x", aggregate: "g/1" }] }),
    201,
  );
  await waitFor("the 10 kept events", () => limitedReceiver.received.length === 10, 30_000);
  await waitFor("the gone endpoint disabled", async () => {
    const e = expectStatus(await server.request("GET", `/v1/endpoints/${gone.id}`), 200);
    return e.disabled && e.disabledReason === "gone";
  });
  expectStatus(await server.request("PATCH", `/v1/endpoints/${limited.id}`, { disabled: true }), 200);
  expectStatus(
    await server.request("POST", `/v1/endpoints/${limited.id}/recover`, { since: "2026-01-01T00:00:00Z" }),
    200,
  );
  await waitFor("three system events at the watcher", () => watcher.received.length === 3, 30_000);
  expect(watcher.received.map((r) => JSON.parse(r.body).type).sort()).toEqual([
    "outboxd.endpoint.disabled",
    "outboxd.endpoint.disabled",
    "outboxd.endpoint.enabled",
  ]);
  expect(await server.outboxd.db.driver.read(verifyLedger())).toMatchObject({ ok: true });
}, 90_000);
