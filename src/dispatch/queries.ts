// The dispatcher's storage operations: claim with a lease, fenced completions, deadline expiry
// and retention. "In flight" is a pending row with a live lease (docs/delivery-lifecycle.md),
// so a crash can never strand a row: its lease simply runs out.
import { all, type Op, run } from "../db/op.ts";
import { idBefore } from "../lib/ids.ts";
import { DEADLINE_EXCEEDED_COUNTER } from "../ops/stats.ts";
import { distinctQueues, promoteHeads, type Queue } from "./heads.ts";

export interface ClaimedDelivery {
  id: string;
  eventId: string;
  endpointId: string;
  aggregate: string;
  sequence: number;
  attemptCount: number;
  availableAt: number;
  deliverBy: number;
}

export interface ClaimRequest {
  /** The lease token of this claim: only its holder may complete these rows. */
  owner: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** How many more sends each endpoint may start now; endpoints not listed get `endpointLimit`. */
  endpointRoom: Record<string, number>;
  endpointLimit: number;
}

/**
 * Claims, in one statement, up to `limit` deliveries that are due, not leased (or whose lease
 * expired), before their deadline, at an enabled endpoint, and the head of their
 * (endpoint, aggregate) queue: no pending delivery of a lower sequence exists there, whether
 * due or scheduled later. Per endpoint, at most its remaining room is taken.
 */
export function* claimDeliveries(request: ClaimRequest): Op<ClaimedDelivery[]> {
  return yield* all<ClaimedDelivery>(
    `WITH heads AS (
       SELECT d.id, d.endpoint_id, d.next_attempt_at FROM deliveries d INDEXED BY deliveries_ready
       WHERE d.status = 'pending' AND d.is_head = 1 AND d.next_attempt_at <= :now
         AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= :now)
         AND d.deliver_by > :now
         AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = d.endpoint_id AND e.disabled = 0)
         -- Before the scan limit: else the backlog of a saturated endpoint fills the whole scan
         -- and starves every other endpoint until it drains.
         AND coalesce(json_extract(:room, '$."' || d.endpoint_id || '"'), :endpointLimit) > 0
       ORDER BY d.next_attempt_at
       LIMIT :scan
     ), ranked AS (
       SELECT id, endpoint_id, next_attempt_at,
         row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at) AS rank
       FROM heads
     )
     UPDATE deliveries
     SET lease_owner = :owner, lease_expires_at = :now + :leaseMs, attempt_count = attempt_count + 1
     WHERE id IN (
       SELECT id FROM ranked
       WHERE rank <= coalesce(json_extract(:room, '$."' || endpoint_id || '"'), :endpointLimit)
       ORDER BY next_attempt_at LIMIT :limit)
     RETURNING id, event_id AS eventId, endpoint_id AS endpointId, aggregate, sequence,
       attempt_count AS attemptCount, available_at AS availableAt, deliver_by AS deliverBy`,
    {
      owner: request.owner,
      now: request.now,
      leaseMs: request.leaseMs,
      limit: request.limit,
      scan: request.limit * 4,
      room: JSON.stringify(request.endpointRoom),
      endpointLimit: request.endpointLimit,
    },
  );
}

export interface AttemptRecord {
  deliveryId: string;
  owner: string;
  endpointId: string;
  /** The delivery's aggregate: with endpointId, its queue, whose next head a completion promotes. */
  aggregate: string;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responsePrefix: string | null;
}

export type Completion =
  /** latencyMs: from the moment it became due (commit, deliverAfter or replay) to the 2xx. */
  | { kind: "delivered"; at: number; latencyMs: number }
  | { kind: "retry"; at: number; nextAttemptAt: number }
  | { kind: "dead"; at: number; reason: string }
  /** 410 Gone: the endpoint is disabled; the delivery waits for re-enable or its deadline. */
  | { kind: "gone"; at: number };

/**
 * Records an attempt and its outcome. Fenced: the delivery changes only while `owner` still
 * holds its lease, so a dispatcher whose lease was taken over cannot overwrite a newer result.
 * Returns false when the fence refused it (the attempt is still logged).
 */
export function* completeDelivery(attempt: AttemptRecord, completion: Completion): Op<boolean> {
  yield* run(
    `INSERT INTO attempts (delivery_id, started_at, duration_ms, status_code, error, response_prefix)
     VALUES (:deliveryId, :startedAt, :durationMs, :statusCode, :error, :responsePrefix)`,
    {
      deliveryId: attempt.deliveryId,
      startedAt: attempt.startedAt,
      durationMs: attempt.durationMs,
      statusCode: attempt.statusCode,
      error: attempt.error,
      responsePrefix: attempt.responsePrefix,
    },
  );
  const fence = {
    id: attempt.deliveryId,
    owner: attempt.owner,
    code: attempt.statusCode,
    error: attempt.error,
  };
  const release =
    "lease_owner = NULL, lease_expires_at = NULL, last_status_code = :code, last_error = :error";
  const where = "WHERE id = :id AND lease_owner = :owner AND status = 'pending'";
  let changed = 0;
  switch (completion.kind) {
    case "delivered":
      changed = yield* run(
        `UPDATE deliveries SET status = 'delivered', delivered_at = :at, ${release} ${where}`,
        {
          ...fence,
          at: completion.at,
        },
      );
      if (changed > 0) yield* recordDelivered(attempt.endpointId, completion.at, completion.latencyMs);
      break;
    case "retry":
      changed = yield* run(`UPDATE deliveries SET next_attempt_at = :next, ${release} ${where}`, {
        ...fence,
        next: completion.nextAttemptAt,
      });
      break;
    case "gone":
      changed = yield* run(`UPDATE deliveries SET next_attempt_at = :at, ${release} ${where}`, {
        ...fence,
        at: completion.at,
      });
      if (changed > 0) {
        yield* run(
          `UPDATE endpoints SET disabled = 1, disabled_reason = :reason, updated_at = :at WHERE id = :endpointId`,
          {
            endpointId: attempt.endpointId,
            reason: `the receiver answered 410 Gone at ${new Date(completion.at).toISOString()}`,
            at: completion.at,
          },
        );
      }
      break;
    case "dead":
      changed = yield* run(
        `UPDATE deliveries SET status = 'dead', dead_at = :at, dead_reason = :reason, ${release} ${where}`,
        { ...fence, at: completion.at, reason: completion.reason },
      );
      if (changed > 0 && completion.reason === "deadline_exceeded") yield* bumpDeadlineCounter(changed);
      break;
  }
  if (changed > 0 && (completion.kind === "delivered" || completion.kind === "dead")) {
    // It left pending: the next of its queue becomes the head.
    yield* promoteHeads([{ endpointId: attempt.endpointId, aggregate: attempt.aggregate }]);
  }
  if (changed > 0) {
    // Endpoint health to the second: at thousands of deliveries a second, writing this one hot
    // row every time would cost more than it tells.
    const column = completion.kind === "delivered" ? "last_success_at" : "last_failure_at";
    yield* run(
      `UPDATE endpoints SET ${column} = :at WHERE id = :endpointId AND (${column} IS NULL OR ${column} <= :at - 1000)`,
      { endpointId: attempt.endpointId, at: completion.at },
    );
  }
  return changed > 0;
}

const RETURNING_QUEUE = "RETURNING endpoint_id AS endpointId, aggregate";

/** Latency rounded down to two significant digits (0-99 ms exactly): the histogram's bins. */
export function latencyFloor(ms: number): number {
  const value = Math.max(0, Math.floor(ms));
  if (value < 100) return value;
  const step = 10 ** (Math.floor(Math.log10(value)) - 1);
  return Math.floor(value / step) * step;
}

/** Counts one delivery in its minute's bucket (stats, metrics and the dashboard read these). */
export function* recordDelivered(endpointId: string, at: number, latencyMs: number): Op<void> {
  const latency = Math.max(0, Math.round(latencyMs));
  const key = { minute: Math.floor(at / 60_000), endpointId, floor: latencyFloor(latency), latency };
  // Update, and insert only for a new bucket: cheaper in SQLite than an upsert every time.
  const counted = yield* run(
    `UPDATE delivered_minutes SET count = count + 1, max_latency_ms = max(max_latency_ms, :latency)
     WHERE minute = :minute AND endpoint_id = :endpointId AND latency_floor = :floor`,
    key,
  );
  if (counted === 0) {
    yield* run(
      `INSERT INTO delivered_minutes (minute, endpoint_id, latency_floor, count, max_latency_ms)
       VALUES (:minute, :endpointId, :floor, 1, :latency)`,
      key,
    );
  }
}

/** Runs an UPDATE that moves deliveries out of pending, promotes their queues' next heads. */
function* leavePending(sql: string, args: Record<string, string | number | null>): Op<number> {
  const queues = yield* all<Queue>(sql, args);
  yield* promoteHeads(distinctQueues(queues));
  return queues.length;
}

/**
 * Moves every pending delivery whose deadline has passed, and which no live lease holds, to
 * `dead` with `deadline_exceeded`. Returns how many.
 */
export function* expireDeadlines(now: number, limit = 1000): Op<number> {
  const changed = yield* leavePending(
    `UPDATE deliveries SET status = 'dead', dead_at = :now, dead_reason = 'deadline_exceeded',
       lease_owner = NULL, lease_expires_at = NULL
     WHERE id IN (
       SELECT id FROM deliveries
       WHERE status = 'pending' AND deliver_by <= :now AND (lease_expires_at IS NULL OR lease_expires_at <= :now)
       LIMIT :limit)
     ${RETURNING_QUEUE}`,
    { now, limit },
  );
  if (changed > 0) yield* bumpDeadlineCounter(changed);
  return changed;
}

function* bumpDeadlineCounter(by: number): Op<void> {
  yield* run(
    `INSERT INTO counters (name, value) VALUES (:name, :by)
     ON CONFLICT (name) DO UPDATE SET value = value + excluded.value`,
    { name: DEADLINE_EXCEEDED_COUNTER, by },
  );
}

/**
 * Retention: deletes delivered deliveries, attempts and commits older than `before`, at most
 * `limit` rows of each per call. Pending and dead deliveries are never pruned, nor the attempts
 * of a delivery that is not delivered.
 */
export function* prune(
  before: number,
  limit: number,
): Op<{ deliveries: number; attempts: number; commits: number }> {
  // The attempts of deliveries delivered before the cutoff (all of them started before it).
  const attempts = yield* run(
    `DELETE FROM attempts WHERE pos IN (
       SELECT a.pos FROM deliveries d INDEXED BY deliveries_delivered_at
         JOIN attempts a ON a.delivery_id = d.id
       WHERE d.status = 'delivered' AND d.delivered_at < :before LIMIT :limit)`,
    { before, limit },
  );
  const deliveries = yield* run(
    `DELETE FROM deliveries WHERE id IN (
       SELECT id FROM deliveries WHERE status = 'delivered' AND delivered_at < :before
         AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = deliveries.id)
       LIMIT :limit)`,
    { before, limit },
  );
  yield* run("DELETE FROM delivered_minutes WHERE minute < :minute", { minute: Math.floor(before / 60_000) });
  const commits = yield* run(
    // Commit ids begin with their creation time: the primary key is the time index.
    "DELETE FROM commits WHERE id IN (SELECT id FROM commits WHERE id < :cutoff LIMIT :limit)",
    { cutoff: idBefore("cmt", before), limit },
  );
  return { deliveries, attempts, commits };
}

/** What a webhook is made of: the event as committed. */
export interface EventToSend {
  id: string;
  type: string;
  aggregate: string;
  sequence: number;
  payload: string;
  occurredAt: number;
  traceparent: string | null;
}

export interface EndpointToSend {
  id: string;
  url: string;
  secrets: string;
}

export interface SendContext {
  events: Map<string, EventToSend>;
  endpoints: Map<string, EndpointToSend>;
}

/** The events and endpoints a batch of claimed deliveries needs to be sent. */
export function* loadSendContext(eventIds: string[], endpointIds: string[]): Op<SendContext> {
  const events = yield* all<EventToSend>(
    `SELECT id, type, aggregate, sequence, payload, occurred_at AS occurredAt, traceparent
     FROM events WHERE id IN (SELECT value FROM json_each(:ids))`,
    { ids: JSON.stringify(eventIds) },
  );
  const endpoints = yield* all<EndpointToSend>(
    "SELECT id, url, secrets FROM endpoints WHERE id IN (SELECT value FROM json_each(:ids))",
    { ids: JSON.stringify(endpointIds) },
  );
  return {
    events: new Map(events.map((e) => [e.id, e])),
    endpoints: new Map(endpoints.map((e) => [e.id, e])),
  };
}
