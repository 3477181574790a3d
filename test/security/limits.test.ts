// Limits that bound what one caller can make outboxd store or spend (DESIGN §3, §4): string
// lengths and list sizes the other suites do not cover, the number of endpoints, and the cap
// on how much of a receiver's answer outboxd reads.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RESPONSE_PREFIX_BYTES } from "../../src/dispatch/sender.ts";
import { MAX_ENDPOINTS } from "../../src/http/routes/endpoints.ts";
import { createEndpoint, expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startReceiver, type TestReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("field limits", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { dispatch: false });
  });
  afterAll(async () => {
    await server.stop();
  });

  const at = (n: number, unit = "x") => unit.repeat(n);
  // [what, method, path, body at the limit (accepted), body over it (refused), pointer]
  const cases: [string, string, string, unknown, unknown, string][] = [
    [
      "event type of 200 characters",
      "POST",
      "/v1/commits",
      { events: [{ type: at(200), aggregate: "l/1" }] },
      { events: [{ type: at(201), aggregate: "l/1" }] },
      "/events/0/type",
    ],
    [
      "aggregate of 255 characters",
      "POST",
      "/v1/commits",
      { events: [{ type: "l.x", aggregate: at(255) }] },
      { events: [{ type: "l.x", aggregate: at(256) }] },
      "/events/0/aggregate",
    ],
    [
      "endpoint URL of 2048 characters",
      "POST",
      "/v1/endpoints",
      { url: `http://127.0.0.1:9/${at(2048 - 19)}` },
      { url: `http://127.0.0.1:9/${at(2049 - 19)}` },
      "/url",
    ],
    [
      "endpoint description of 1000 characters",
      "POST",
      "/v1/endpoints",
      { url: "http://127.0.0.1:9/d", description: at(1000) },
      { url: "http://127.0.0.1:9/d", description: at(1001) },
      "/description",
    ],
    [
      "100 event-type patterns",
      "POST",
      "/v1/endpoints",
      { url: "http://127.0.0.1:9/p", eventTypes: Array.from({ length: 100 }, (_, i) => `t${i}.*`) },
      { url: "http://127.0.0.1:9/p", eventTypes: Array.from({ length: 101 }, (_, i) => `t${i}.*`) },
      "/eventTypes",
    ],
    [
      "an event-type pattern of 256 characters",
      "POST",
      "/v1/endpoints",
      { url: "http://127.0.0.1:9/p", eventTypes: ["a.b", `${at(254)}.*`] },
      { url: "http://127.0.0.1:9/p", eventTypes: ["a.b", `${at(255)}.*`] },
      "/eventTypes/1",
    ],
    [
      "token name of 200 characters",
      "POST",
      "/v1/tokens",
      { name: at(200), scopes: ["read"] },
      { name: at(201), scopes: ["read"] },
      "/name",
    ],
  ];
  test.each(cases)("%s is accepted, one more is 422", async (_what, method, path, ok, over, pointer) => {
    expect((await server.request(method, path, ok)).status).toBeLessThan(300);
    expectProblem(await server.request(method, path, over), 422, pointer);
  });

  test("an event addressed to more than 100 endpoints is 422", async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `ep_${i}`);
    expectProblem(
      await server.request("POST", "/v1/commits", {
        events: [{ type: "l.x", aggregate: "l/1", endpoints: ids }],
      }),
      422,
      "/events/0/endpoints",
    );
  });

  test("a 900 KB pattern, on create or on a change, is 422 (it once slowed every commit down)", async () => {
    const big = `${at(900_000)}.*`;
    expectProblem(
      await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/b", eventTypes: [big] }),
      422,
      "/eventTypes/0",
    );
    const id = expectStatus(
      await server.request("POST", "/v1/endpoints", { url: "http://127.0.0.1:9/b" }),
      201,
    ).id;
    expectProblem(
      await server.request("PATCH", `/v1/endpoints/${id}`, { eventTypes: [big] }),
      422,
      "/eventTypes/0",
    );
  });

  test("a deliverAfter more than 30 days ahead (OUTBOXD_MAX_DELIVER_AFTER) is 422; 29 days is fine", async () => {
    const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
    const event = (deliverAfter: string) => ({
      events: [{ type: "l.later", aggregate: "l/later", deliverAfter }],
    });
    expectStatus(await server.request("POST", "/v1/commits", event(inDays(29))), 201);
    for (const far of [inDays(31), "9999-12-31T00:00:00Z"]) {
      expectProblem(await server.request("POST", "/v1/commits", event(far)), 422, "/events/0/deliverAfter");
    }
  });

  test("an Authorization header of 64 KiB is refused without a 500", async () => {
    const response = await fetch(`${server.url}/v1/events`, {
      headers: { authorization: `Bearer ${"a".repeat(64 * 1024)}` },
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
  });
});

test("a commit creating more than OUTBOXD_MAX_DELIVERIES_PER_COMMIT deliveries is 422 and writes nothing", async () => {
  const server = await startServer({ OUTBOXD_MAX_DELIVERIES_PER_COMMIT: "6" }, { dispatch: false });
  try {
    for (let i = 0; i < 3; i++) await createEndpoint(server, ["fan.*"]);
    const events = (n: number) => Array.from({ length: n }, () => ({ type: "fan.out", aggregate: "fan/1" }));
    // 2 events x 3 endpoints = 6: at the limit.
    expectStatus(await server.request("POST", "/v1/commits", { events: events(2) }), 201);
    const over = expectProblem(
      await server.request("POST", "/v1/commits", {
        records: [{ collection: "fan", id: "r", data: {} }],
        events: events(3),
      }),
      422,
      "/events",
    );
    expect(over.detail).toContain("9 deliveries");
    expectProblem(await server.request("GET", "/v1/records/fan/r"), 404);
    expect(expectStatus(await server.request("GET", "/v1/events?aggregate=fan/1"), 200).data).toHaveLength(2);
  } finally {
    await server.stop();
  }
});

test(`at most MAX_ENDPOINTS (${MAX_ENDPOINTS}) endpoints, even when the last ones are created at once`, async () => {
  const server = await startServer({}, { dispatch: false });
  try {
    const create = (i: number) => server.request("POST", "/v1/endpoints", { url: `http://127.0.0.1:9/${i}` });
    for (let i = 0; i < MAX_ENDPOINTS - 10; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, MAX_ENDPOINTS - 10 - i) }, (_, j) => create(i + j)),
      );
      for (const r of batch) expect(r.status).toBe(201);
    }
    // The last ten places, raced for by forty requests.
    const raced = await Promise.all(Array.from({ length: 40 }, (_, j) => create(MAX_ENDPOINTS + j)));
    expect(raced.filter((r) => r.status === 201)).toHaveLength(10);
    for (const r of raced.filter((r) => r.status !== 201)) {
      expect(expectProblem(r, 422).type).toEndWith("/too-many-endpoints");
    }
    let count = 0;
    let after: string | null = null;
    do {
      const listed = expectStatus(
        await server.request("GET", `/v1/endpoints?limit=500${after ? `&after=${after}` : ""}`),
        200,
      );
      count += listed.data.length;
      after = listed.next;
    } while (after !== null);
    expect(count).toBe(MAX_ENDPOINTS);
    // Deleting one makes room for one.
    const first = expectStatus(await server.request("GET", "/v1/endpoints?limit=1"), 200).data[0];
    expectStatus(await server.request("DELETE", `/v1/endpoints/${first.id}`), 200);
    expectStatus(await create(9999), 201);
    expect((await create(10_000)).status).toBe(422);
  } finally {
    await server.stop();
  }
});

describe(`a receiver's answer is read only up to ${RESPONSE_PREFIX_BYTES} bytes`, () => {
  let server: TestServer;
  let receiver: TestReceiver;
  const TEN_MB = 10 * 1024 * 1024;
  const CHUNK = 64 * 1024;
  let pulled = 0;
  let cancelled = false;

  /** 10 MB of 'x', produced only as fast as the client takes it. */
  const bigBody = () => {
    pulled = 0;
    cancelled = false;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= TEN_MB) return controller.close();
        pulled += CHUNK;
        controller.enqueue(new Uint8Array(CHUNK).fill(0x78));
      },
      cancel() {
        cancelled = true;
      },
    });
  };

  beforeAll(async () => {
    receiver = startReceiver(() => new Response(bigBody(), { status: 200 }));
    server = await startServer({ OUTBOXD_SEND_TIMEOUT: "5s", OUTBOXD_LEASE: "20s" });
  });
  afterAll(async () => {
    await server.stop();
    await receiver.stop();
  });

  test("a 10 MB answer: the attempt keeps 1 KiB, the send ends without taking the rest", async () => {
    const endpoint = expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
    const committed = expectStatus(
      await server.request("POST", "/v1/commits", {
        events: [{ type: "big.answer", aggregate: "big/1", endpoints: [endpoint.id] }],
      }),
      201,
    );
    const deliveryId = committed.events[0].deliveries[0].id;
    const delivered = await waitFor("the delivery", async () => {
      const body = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}`), 200);
      return body.status === "delivered" && body;
    });
    expect(delivered.lastStatusCode).toBe(200);
    const [attempt] = expectStatus(await server.request("GET", `/v1/deliveries/${deliveryId}/attempts`), 200);
    expect(attempt.statusCode).toBe(200);
    expect(Buffer.byteLength(attempt.responsePrefix)).toBeLessThanOrEqual(RESPONSE_PREFIX_BYTES);
    expect(attempt.responsePrefix).toBe("x".repeat(RESPONSE_PREFIX_BYTES));
    expect(attempt.durationMs).toBeLessThan(5000);
    // The client hung up: the receiver's stream was cancelled long before its end.
    await waitFor("the receiver's stream cancelled", () => cancelled);
    expect(pulled).toBeLessThan(TEN_MB);
  });

  test("an answer that never ends does not hold the send until the timeout", async () => {
    receiver.respond = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            controller.enqueue(new Uint8Array(CHUNK).fill(0x79));
          },
        }),
        { status: 202 },
      );
    const endpoint = expectStatus(await server.request("POST", "/v1/endpoints", { url: receiver.url }), 201);
    const started = Date.now();
    const pinged = expectStatus(await server.request("POST", `/v1/endpoints/${endpoint.id}/test`), 200);
    expect(pinged).toMatchObject({ statusCode: 202, error: null });
    expect(pinged.responsePrefix).toBe("y".repeat(RESPONSE_PREFIX_BYTES));
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
