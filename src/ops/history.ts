// The outboxd extensions behind the dashboard (docs/design.md, "outboxd extension"): the
// delivery history of the last hour per minute (GET /v1/stats/history) and the attempt log
// across deliveries, newest first (GET /v1/attempts).
import { all, type Op } from "../db/op.ts";
import { iso } from "../lib/time.ts";

export const HISTORY_BUCKET_MS = 60_000;
export const HISTORY_BUCKETS = 60;

export interface HistoryBucket {
  /** Start of the minute (RFC 3339). */
  start: string;
  /** Deliveries marked delivered in this minute. */
  delivered: number;
  /** Median of delivered_at - available_at (ms) over them, to two significant digits; null if none. */
  latencyP50Ms: number | null;
  /** The largest delivered_at - available_at (ms) over them; null if none. */
  latencyMaxMs: number | null;
}

export interface StatsHistory {
  from: string;
  to: string;
  bucketSeconds: number;
  buckets: HistoryBucket[];
}

interface HistoryRow {
  minute: number;
  floor: number;
  n: number;
  maxLatency: number;
}

/**
 * Per minute over the last hour (the current minute last): deliveries completed and their
 * latency from the moment they became due (the later of commit and deliverAfter, or the replay).
 * Reads the delivered_minutes buckets, which the dispatcher fills as it marks deliveries
 * delivered, by latency rounded down to two significant digits: the median is exact below
 * 100 ms and within 10% above; the maximum is exact. At most a few hundred rows per minute,
 * however many deliveries the hour saw.
 */
export function* statsHistory(now: number): Op<StatsHistory> {
  const to = Math.floor(now / HISTORY_BUCKET_MS) * HISTORY_BUCKET_MS + HISTORY_BUCKET_MS;
  const from = to - HISTORY_BUCKETS * HISTORY_BUCKET_MS;
  const rows = yield* all<HistoryRow>(
    `SELECT minute, latency_floor AS floor, sum(count) AS n, max(max_latency_ms) AS maxLatency
     FROM delivered_minutes WHERE minute >= :from AND minute < :to
     GROUP BY minute, latency_floor`,
    { from: from / HISTORY_BUCKET_MS, to: to / HISTORY_BUCKET_MS },
  );
  const groups: HistoryRow[][] = Array.from({ length: HISTORY_BUCKETS }, () => []);
  for (const row of rows) groups[row.minute - from / HISTORY_BUCKET_MS]?.push(row);
  return {
    from: iso(from),
    to: iso(to),
    bucketSeconds: HISTORY_BUCKET_MS / 1000,
    buckets: groups.map((group, i) => bucketOf(from + i * HISTORY_BUCKET_MS, group)),
  };
}

function bucketOf(start: number, group: HistoryRow[]): HistoryBucket {
  const delivered = group.reduce((n, r) => n + r.n, 0);
  if (delivered === 0) return { start: iso(start), delivered, latencyP50Ms: null, latencyMaxMs: null };
  const sorted = [...group].sort((a, b) => a.floor - b.floor);
  let seen = 0;
  let p50 = 0;
  for (const r of sorted) {
    seen += r.n;
    if (seen * 2 >= delivered) {
      p50 = r.floor;
      break;
    }
  }
  return {
    start: iso(start),
    delivered,
    latencyP50Ms: p50,
    latencyMaxMs: Math.max(...group.map((r) => r.maxLatency)),
  };
}

export interface AttemptLogEntry {
  at: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responsePrefix: string | null;
  deliveryId: string;
  endpointId: string | null;
  eventId: string | null;
  type: string | null;
  aggregate: string | null;
  sequence: number | null;
}

/**
 * The attempt log across deliveries, newest first (by rowid, the order they were logged), as a
 * page of DESIGN §3: `next` is the position of the page's last entry, `after` that of the previous.
 */
export function* recentAttempts(
  limit: number,
  after: number | undefined,
): Op<{ data: AttemptLogEntry[]; next: string | null }> {
  const rows = yield* all<Omit<AttemptLogEntry, "at"> & { pos: number; startedAt: number }>(
    `SELECT a.pos, a.started_at AS startedAt, a.duration_ms AS durationMs, a.status_code AS statusCode,
       a.error, a.response_prefix AS responsePrefix, a.delivery_id AS deliveryId,
       d.endpoint_id AS endpointId, d.event_id AS eventId, d.event_type AS type, d.aggregate, d.sequence
     FROM attempts a LEFT JOIN deliveries d ON d.id = a.delivery_id
     WHERE (:after IS NULL OR a.pos < :after)
     ORDER BY a.pos DESC LIMIT :limit`,
    { after: after ?? null, limit },
  );
  const last = rows.at(-1);
  return {
    data: rows.map(({ pos: _pos, startedAt, ...rest }) => ({ at: iso(startedAt), ...rest })),
    next: rows.length === limit && last ? String(last.pos) : null,
  };
}
