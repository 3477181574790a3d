// "Delivered in the last hour" reads per-minute buckets, not the deliveries themselves.
import { afterEach, expect, test } from "bun:test";
import { all, run } from "../../src/db/op.ts";
import { latencyFloor } from "../../src/deliveries/counters.ts";
import { prune } from "../../src/deliveries/retention.ts";
import { stats } from "../../src/ops/stats.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer | undefined;
afterEach(() => server?.stop());

test("deliveredLastHour sums the minute buckets of the last hour, per endpoint and in total; prune drops old buckets", async () => {
  // Raw operations through this thread's Writer (the SQL under test): the writer on this thread.
  server = await startServer({}, { dispatch: false, writer: "here" });
  const { db } = server.outboxd;
  const now = Date.now();
  const minute = (msAgo: number) => Math.floor((now - msAgo) / 60_000);
  for (const [endpoint, msAgo, count] of [
    ["ep_a", 5 * 60_000, 7],
    ["ep_a", 50 * 60_000, 3],
    ["ep_b", 10 * 60_000, 4],
    ["ep_a", 2 * 3_600_000, 1000], // two hours ago: not counted
  ] as const) {
    await db.writer.write(
      run(
        "INSERT INTO delivered_minutes (endpoint_id, minute, latency_floor, count, max_latency_ms) VALUES (:endpoint, :minute, 0, :count, 0)",
        {
          endpoint,
          minute: minute(msAgo),
          count,
        },
      ),
    );
  }
  const current = await db.driver.read(stats(now));
  expect(current.deliveredLastHour).toBe(14);
  expect(Object.fromEntries(current.endpoints.map((e) => [e.id, e.deliveredLastHour]))).toEqual({
    ep_a: 10,
    ep_b: 4,
  });

  await db.writer.write(prune({ before: now - 3_600_000, now }, 1000));
  const left = await db.driver.read(
    all<{ minute: number }>("SELECT minute FROM delivered_minutes ORDER BY minute"),
  );
  expect(left.map((r) => r.minute)).toEqual([minute(50 * 60_000), minute(10 * 60_000), minute(5 * 60_000)]);
  expect((await db.driver.read(stats(now))).deliveredLastHour).toBe(14);
});

test("latency bins: exact below 100 ms, then two significant digits; never negative", () => {
  expect([0, 7, 99, 100, 109, 1234, 99_999, 123_456, -50].map(latencyFloor)).toEqual([
    0, 7, 99, 100, 100, 1200, 99_000, 120_000, 0,
  ]);
});
