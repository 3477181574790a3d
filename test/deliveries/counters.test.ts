// The per-minute delivered buckets (src/deliveries/counters.ts) on a real database: a batch's
// deliveries counted once each in the bucket of their minute, endpoint and latency bin, whatever
// order they come in (each run of the same bucket, and a bucket met again after another).
import { expect, test } from "bun:test";
import { all } from "../../src/db/op.ts";
import { recordDeliveredMany } from "../../src/deliveries/counters.ts";
import { suiteDatabase } from "../helpers/database.ts";

const database = suiteDatabase();

test("a batch's deliveries land once each in their minute's bucket per endpoint and latency bin, runs and returns alike", async () => {
  const m = 60_000 * 29_000_000;
  const d = (endpointId: string, at: number, latencyMs: number) => ({ endpointId, at, latencyMs });
  await database().writer.write(
    recordDeliveredMany([
      d("a", m + 1, 5),
      d("a", m + 2, 5.4),
      d("a", m + 3, 1234),
      d("a", m + 4, 1250),
      d("b", m + 5, 1234),
      d("a", m + 6, 5),
      d("a", m + 60_000, 5),
      d("a", m + 7, 1299),
    ]),
  );
  // A second batch adds to the buckets the first made.
  await database().writer.write(recordDeliveredMany([d("a", m + 8, 5), d("b", m + 9, 1200)]));
  const rows = await database().driver.read(
    all<{
      minute: number;
      endpoint_id: string;
      latency_floor: number;
      count: number;
      max_latency_ms: number;
    }>(
      "SELECT minute, endpoint_id, latency_floor, count, max_latency_ms FROM delivered_minutes ORDER BY minute, endpoint_id, latency_floor",
    ),
  );
  const minute = m / 60_000;
  expect(rows).toEqual([
    { minute, endpoint_id: "a", latency_floor: 5, count: 4, max_latency_ms: 5 },
    { minute, endpoint_id: "a", latency_floor: 1200, count: 3, max_latency_ms: 1299 },
    { minute, endpoint_id: "b", latency_floor: 1200, count: 2, max_latency_ms: 1234 },
    { minute: minute + 1, endpoint_id: "a", latency_floor: 5, count: 1, max_latency_ms: 5 },
  ]);
});
