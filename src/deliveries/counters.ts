// The counters kept beside the deliveries: per-minute delivered buckets by latency bin (stats,
// metrics and the dashboard's history read these instead of the delivered rows), and the
// running total of deadline dead-letters (which survives replay and retention). Written in the
// same transaction as the transition they count (complete.ts, expire.ts).
import { type Op, run, updateOrInsert } from "../db/op.ts";

export const DEADLINE_EXCEEDED_COUNTER = "deadline_exceeded";

const MINUTE_MS = 60_000;

/** The bucket a time falls in (delivered_minutes.minute). */
export function minuteOf(at: number): number {
  return Math.floor(at / MINUTE_MS);
}

/** Latency rounded down to two significant digits (0-99 ms exactly): the histogram's bins. */
export function latencyFloor(ms: number): number {
  const value = Math.max(0, Math.floor(ms));
  if (value < 100) return value;
  const step = 10 ** (Math.floor(Math.log10(value)) - 1);
  return Math.floor(value / step) * step;
}

/** Counts one delivery in its minute's bucket. */
export function* recordDelivered(endpointId: string, at: number, latencyMs: number): Op<void> {
  yield* recordDeliveredMany([{ endpointId, at, latencyMs }]);
}

/** Counts many deliveries: one statement (or two) per bucket they fall in, not per delivery. */
export function* recordDeliveredMany(
  deliveries: { endpointId: string; at: number; latencyMs: number }[],
): Op<void> {
  const buckets = new Map<
    string,
    { minute: number; endpointId: string; floor: number; n: number; latency: number }
  >();
  // The bucket of the delivery before: a batch's deliveries mostly share their minute, endpoint
  // and (two significant digits of) latency, so most find theirs without a key made and looked up.
  let last: { minute: number; endpointId: string; floor: number; n: number; latency: number } | undefined;
  for (const d of deliveries) {
    const latency = Math.max(0, Math.round(d.latencyMs));
    const minute = minuteOf(d.at);
    const floor = latencyFloor(latency);
    let bucket =
      last !== undefined && last.minute === minute && last.floor === floor && last.endpointId === d.endpointId
        ? last
        : undefined;
    if (bucket === undefined) {
      const key = `${minute}\u0000${d.endpointId}\u0000${floor}`;
      bucket = buckets.get(key);
      if (bucket === undefined) {
        bucket = { minute, endpointId: d.endpointId, floor, n: 0, latency };
        buckets.set(key, bucket);
      }
    }
    bucket.n += 1;
    bucket.latency = Math.max(bucket.latency, latency);
    last = bucket;
  }
  for (const key of buckets.values()) {
    // Update, and insert only for a new bucket: cheaper in SQLite than an upsert every time.
    yield* updateOrInsert(
      `UPDATE delivered_minutes SET count = count + :n, max_latency_ms = max(max_latency_ms, :latency)
       WHERE minute = :minute AND endpoint_id = :endpointId AND latency_floor = :floor`,
      `INSERT INTO delivered_minutes (minute, endpoint_id, latency_floor, count, max_latency_ms)
       VALUES (:minute, :endpointId, :floor, :n, :latency)`,
      key,
    );
  }
}

export function* bumpDeadlineCounter(by: number): Op<void> {
  yield* run(
    `INSERT INTO counters (name, value) VALUES (:name, :by)
     ON CONFLICT (name) DO UPDATE SET value = value + excluded.value`,
    { name: DEADLINE_EXCEEDED_COUNTER, by },
  );
}
