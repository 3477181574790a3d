// An answer lost after the server committed (DESIGN §8): a real libSQL server (sqld on 127.0.0.1)
// behind a loopback TCP proxy that forwards a group commit's write request whole, lets the server
// answer, and closes outboxd's connection instead of passing the answer on. Every client of that
// group hears 503 `outcome-unknown`; the group is all there or not at all; a retry with the same
// Idempotency-Key, or with the same event ids, answers the first commit and never writes twice.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type TestResponse, type TestServer } from "../helpers/server.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

let sqld: Sqld;
let proxy: TcpProxy;
let server: TestServer;

beforeAll(async () => {
  sqld = await startSqld();
  proxy = await startTcpProxy({ host: "127.0.0.1", port: sqld.port });
  server = await startServer({ OUTBOXD_DATABASE_URL: proxy.url }, { dispatch: false });
});

afterAll(async () => {
  await server?.stop();
  proxy?.stop();
  await sqld?.stop();
});

/** A commit's write request: the one that inserts its events. */
const writesEvents = (request: string) => /INSERT INTO [`"]?events/i.test(request);

function body(id: string, eventId?: string) {
  return {
    records: [{ collection: "orders", id, data: { id } }],
    events: [{ type: "order.created", aggregate: `orders/${id}`, ...(eventId ? { id: eventId } : {}) }],
  };
}

async function stored(ids: string[]): Promise<{ records: number; events: number; versions: number[] }> {
  let records = 0;
  let events = 0;
  const versions: number[] = [];
  for (const id of ids) {
    const record = await server.request("GET", `/v1/records/orders/${id}`);
    if (record.status === 200) {
      records++;
      versions.push(record.body.version);
    }
    const listed = await server.request("GET", `/v1/events?aggregate=${encodeURIComponent(`orders/${id}`)}`);
    events += listed.body.data.length;
  }
  return { records, events, versions };
}

function expectOutcomeUnknown(response: TestResponse): void {
  expect(response.status).toBe(503);
  expect(response.headers.get("content-type")).toContain("application/problem+json");
  expect(response.body.type).toEndWith("outcome-unknown");
}

test("an answer lost after the server committed: 503 outcome-unknown, all committed, and a retry with the same Idempotency-Key writes nothing twice", async () => {
  const ids = Array.from({ length: 8 }, (_, i) => `key-${i}`);
  const cut = proxy.cutAnswerOf(writesEvents);
  const first = await Promise.all(
    ids.map((id) => server.request("POST", "/v1/commits", body(id), { "idempotency-key": id })),
  );
  await cut;
  const unknown = first.filter((r) => r.status === 503);
  expect(unknown.length).toBeGreaterThan(0);
  for (const response of unknown) expectOutcomeUnknown(response);
  expect(first.every((r) => r.status === 201 || r.status === 503)).toBe(true);
  // The server committed the group whose answer was lost: every commit is there, whole.
  expect(await stored(ids)).toEqual({ records: 8, events: 8, versions: Array(8).fill(1) });

  const again = await Promise.all(
    ids.map((id) => server.request("POST", "/v1/commits", body(id), { "idempotency-key": id })),
  );
  expect(again.map((r) => r.status)).toEqual(Array(8).fill(201));
  for (const [i, response] of again.entries()) {
    if (first[i]?.status === 201) expect(response.body).toEqual(first[i]?.body);
  }
  expect(await stored(ids)).toEqual({ records: 8, events: 8, versions: Array(8).fill(1) });
});

test("an answer lost after the server committed: a retry with the same event ids (no key) writes nothing twice", async () => {
  const ids = Array.from({ length: 4 }, (_, i) => `eid-${i}`);
  const eventIds = ids.map(() => crypto.randomUUID());
  const cut = proxy.cutAnswerOf(writesEvents);
  const first = await Promise.all(
    ids.map((id, i) => server.request("POST", "/v1/commits", body(id, eventIds[i]))),
  );
  await cut;
  for (const response of first.filter((r) => r.status !== 201)) expectOutcomeUnknown(response);
  expect(first.some((r) => r.status === 503)).toBe(true);
  expect(await stored(ids)).toEqual({ records: 4, events: 4, versions: Array(4).fill(1) });

  const again = await Promise.all(
    ids.map((id, i) => server.request("POST", "/v1/commits", body(id, eventIds[i]))),
  );
  expect(again.map((r) => r.status)).toEqual(Array(4).fill(201));
  expect(again.map((r) => r.body.events[0].id)).toEqual(eventIds);
  // A replay writes nothing: no event twice and no record version without its event.
  expect(await stored(ids)).toEqual({ records: 4, events: 4, versions: Array(4).fill(1) });
});

test("after a cut connection the next commits go through on a new one", async () => {
  const before = proxy.connections();
  const response = await server.request("POST", "/v1/commits", body("after-cut"), {
    "idempotency-key": "after-cut",
  });
  expect(response.status).toBe(201);
  expect(proxy.connections()).toBeGreaterThanOrEqual(before);
  expect(await stored(["after-cut"])).toEqual({ records: 1, events: 1, versions: [1] });
});
