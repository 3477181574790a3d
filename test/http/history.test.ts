// The outboxd extensions behind the dashboard (docs/design.md): GET /v1/stats/history (per
// minute over the last hour: delivered count, latency median and max) and GET /v1/attempts (the
// attempt log across deliveries, newest first). Rows are backdated in the database so the
// expected buckets are known exactly.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createEndpoint, expectProblem, expectStatus } from "../helpers/assertions.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { deliveredAtWrite, sqlWrite } from "../helpers/test-writes.ts";

let server: TestServer;
let deliveries: string[] = [];
const MINUTE = 60_000;

beforeAll(async () => {
  server = await startServer({}, { dispatch: false });
  await createEndpoint(server);
  const commit = expectStatus(
    await server.request("POST", "/v1/commits", {
      events: Array.from({ length: 9 }, (_, i) => ({ type: "history.test", aggregate: `h/${i}` })),
    }),
    201,
  );
  deliveries = commit.events.map((e: { deliveries: { id: string }[] }) => e.deliveries[0]?.id);
});
afterAll(async () => {
  await server.stop();
});

/**
 * Records a delivery as delivered at `deliveredAt`, `latency` ms after it became due: the row,
 * and its count through the same operation the dispatcher's completion uses.
 */
async function delivered(id: string | undefined, deliveredAt: number, latency: number): Promise<void> {
  if (!id) throw new Error("no delivery");
  const endpointId = await server.outboxd.db.write(deliveredAtWrite(id, deliveredAt, latency));
  expect(endpointId).toBeDefined();
}

describe("GET /v1/stats/history", () => {
  test("60 minute buckets, oldest first, with count, median (two significant digits) and max", async () => {
    const now = Date.now();
    // A few seconds into their minutes, so the deliveries spread over the next seconds stay in
    // one bucket (unaligned, a minute boundary would split them about one run in twenty).
    const minuteStart = (t: number) => Math.floor(t / MINUTE) * MINUTE;
    const early = minuteStart(now - 30 * MINUTE) + 5_000;
    const late = minuteStart(now - 10 * MINUTE) + 5_000;
    const [a, b, c, d, e, f, g, h, i] = deliveries;
    await delivered(a, early, 5);
    await delivered(b, early + 1000, 40);
    await delivered(c, early + 2000, 1234);
    await delivered(d, early + 3000, 99_999);
    await delivered(e, late, 2);
    await delivered(f, late + 10, 3);
    await delivered(g, late + 20, 7);
    await delivered(h, late + 30, -50); // delivered before it was due (a replay's clock): counted as 0
    await delivered(i, now - 2 * 3_600_000, 10); // out of range

    const history = expectStatus(await server.request("GET", "/v1/stats/history"), 200);
    expect(history.bucketSeconds).toBe(60);
    expect(history.buckets).toHaveLength(60);
    const from = Date.parse(history.from);
    expect(Date.parse(history.to) - from).toBe(60 * MINUTE);
    expect(from % MINUTE).toBe(0);
    expect(Date.parse(history.to)).toBeGreaterThan(now);
    history.buckets.forEach((bucket: { start: string }, n: number) => {
      expect(Date.parse(bucket.start)).toBe(from + n * MINUTE);
    });

    const at = (t: number) => history.buckets[Math.floor((t - from) / MINUTE)];
    // Sorted floors 5, 40, 1200, 99000: the second of four is the median.
    expect(at(early)).toMatchObject({ delivered: 4, latencyP50Ms: 40, latencyMaxMs: 99_999 });
    expect(at(late)).toMatchObject({ delivered: 4, latencyP50Ms: 2, latencyMaxMs: 7 });
    const total = history.buckets.reduce(
      (n: number, bucket: { delivered: number }) => n + bucket.delivered,
      0,
    );
    expect(total).toBe(8);
    const empty = history.buckets.find((bucket: { delivered: number }) => bucket.delivered === 0);
    expect(empty).toMatchObject({ latencyP50Ms: null, latencyMaxMs: null });
  });

  test("needs a read token: none is 401, a commit-only token 403", async () => {
    const commitOnly = expectStatus(
      await server.request("POST", "/v1/tokens", { name: "writer", scopes: ["commit"] }),
      201,
    ).token;
    for (const path of ["/v1/stats/history", "/v1/attempts"]) {
      expectProblem(await server.request("GET", path, undefined, { authorization: "" }), 401);
      expectProblem(
        await server.request("GET", path, undefined, { authorization: `Bearer ${commitOnly}` }),
        403,
      );
    }
  });
});

describe("GET /v1/attempts", () => {
  test("newest first across deliveries, with the delivery and its event, paged by cursor", async () => {
    const [a, b] = deliveries;
    const t = Date.now();
    const attempts: [string | undefined, number, number | null, string | null][] = [
      [a, t, 500, null],
      [b, t + 1, null, "connection refused"],
      [a, t + 2, 200, null],
      ["dlv_gone", t + 3, 200, null],
    ];
    for (const [delivery, startedAt, statusCode, error] of attempts) {
      await server.outboxd.db.write(
        sqlWrite(
          `INSERT INTO attempts (delivery_id, started_at, duration_ms, status_code, error, response_prefix)
           VALUES (:delivery, :startedAt, 3, :statusCode, :error, :prefix)`,
          { delivery: delivery ?? null, startedAt, statusCode, error, prefix: statusCode ? "ok" : null },
        ),
      );
    }
    const first = expectStatus(await server.request("GET", "/v1/attempts?limit=3"), 200);
    expect(first.data.map((x: { deliveryId: string }) => x.deliveryId)).toEqual(["dlv_gone", a, b]);
    expect(first.data[1]).toEqual({
      at: new Date(t + 2).toISOString(),
      durationMs: 3,
      statusCode: 200,
      error: null,
      responsePrefix: "ok",
      deliveryId: a,
      endpointId: expect.stringMatching(/^ep_/),
      eventId: expect.any(String),
      type: "history.test",
      aggregate: "h/0",
      sequence: 1,
    });
    // An attempt whose delivery is gone still shows, without its event.
    expect(first.data[0]).toMatchObject({ endpointId: null, type: null, aggregate: null, sequence: null });
    expect(first.data[2]).toMatchObject({ statusCode: null, error: "connection refused" });
    expect(typeof first.next).toBe("string");
    const second = expectStatus(await server.request("GET", `/v1/attempts?limit=3&after=${first.next}`), 200);
    expect(second.data.map((x: { deliveryId: string }) => x.deliveryId)).toEqual([a]);
    expect(second.next).toBeNull();
  });

  test("refuses a bad cursor or limit, and needs a read token", async () => {
    expectProblem(await server.request("GET", "/v1/attempts?after=abc"), 422, "query:after");
    expectProblem(await server.request("GET", "/v1/attempts?limit=501"), 422, "/limit");
    expectProblem(await server.request("GET", "/v1/attempts?bogus=1"), 422);
    expectProblem(await server.request("GET", "/v1/attempts", undefined, { authorization: "" }), 401);
  });
});
