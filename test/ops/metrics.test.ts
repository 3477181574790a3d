// /metrics and /v1/stats after a known workload: three events delivered, one dead letter, one
// waiting for a later time, checked number by number.
import { afterEach, expect, test } from "bun:test";
import { startReceiver, waitFor } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** The value of one sample line, e.g. `outboxd_dead_deliveries` or a labelled series. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no sample ${series} in:\n${text}`);
  return Number(line.slice(series.length + 1));
}

async function workload(): Promise<{ server: TestServer; endpointId: string }> {
  const receiver = startReceiver((request) =>
    JSON.parse(request.body).type === "order.failed"
      ? new Response("no", { status: 500 })
      : new Response("ok"),
  );
  const server = await startServer({ OUTBOXD_RETRY_BASE: "50ms", OUTBOXD_RETRY_CAP: "100ms" });
  cleanup.push(
    () => receiver.stop(),
    () => server.stop(),
  );
  const endpoint = await server.request("POST", "/v1/endpoints", { url: receiver.url });
  for (const id of ["o-1", "o-2", "o-3"]) {
    expect(
      (
        await server.request("POST", "/v1/commits", {
          records: [{ collection: "orders", id, data: {} }],
          events: [{ type: "order.paid" }],
        })
      ).status,
    ).toBe(201);
  }
  // One that can never be delivered in time, one scheduled an hour from now.
  await server.request("POST", "/v1/commits", {
    events: [
      { type: "order.failed", aggregate: "orders/o-4", deliverWithin: "1s" },
      {
        type: "order.paid",
        aggregate: "orders/o-5",
        deliverAfter: new Date(Date.now() + 3_600_000).toISOString(),
      },
    ],
  });
  await waitFor("three delivered and one dead", async () => {
    const stats = (await server.request("GET", "/v1/stats")).body;
    return stats.deliveredLastHour === 3 && stats.dead === 1;
  });
  return { server, endpointId: endpoint.body.id };
}

test("GET /v1/stats and GET /metrics report the workload's numbers", async () => {
  const { server, endpointId } = await workload();
  const stats = (await server.request("GET", "/v1/stats")).body;
  expect(stats).toMatchObject({
    pending: 1,
    inFlight: 0,
    due: 0,
    dead: 1,
    deadlineExceededTotal: 1,
    deliveredLastHour: 3,
    oldestPendingAgeSeconds: 0, // the only pending one is not due yet
  });
  expect(stats.endpoints).toEqual([
    expect.objectContaining({ id: endpointId, pending: 1, dead: 1, deliveredLastHour: 3 }),
  ]);

  const metrics = await server.request("GET", "/metrics");
  expect(metrics.status).toBe(200);
  expect(metrics.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
  const text = metrics.body as string;
  expect(sample(text, "outboxd_pending_deliveries")).toBe(1);
  expect(sample(text, "outboxd_dead_deliveries")).toBe(1);
  expect(sample(text, "outboxd_deadline_exceeded_total")).toBe(1);
  expect(sample(text, "outboxd_commits_total")).toBe(4);
  expect(sample(text, `outboxd_delivery_attempts_total{endpoint="${endpointId}",result="delivered"}`)).toBe(
    3,
  );
  expect(sample(text, `outboxd_delivery_latency_seconds_count{endpoint="${endpointId}"}`)).toBe(3);
  expect(sample(text, "outboxd_commit_duration_seconds_count")).toBe(4);
  // Histogram buckets are cumulative and end at +Inf with the count.
  expect(sample(text, `outboxd_delivery_latency_seconds_bucket{endpoint="${endpointId}",le="+Inf"}`)).toBe(3);
});

test("/metrics needs a read token on the main port", async () => {
  const { server } = await workload();
  expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
});
