// Reads of deliveries and their attempt log, and the dead-letter replay (DESIGN §3 Events and
// deliveries). Replay is the only way out of `dead`: back to `pending`, attempts reset, with a
// new deadline.
import { all, get, type Op } from "../db/op.ts";
import { iso } from "../lib/time.ts";
import { distinctQueues, type Queue, resetHeads } from "./heads.ts";

export type DeliveryStatus = "pending" | "delivered" | "dead";

export interface DeliveryRow {
  id: string;
  eventId: string;
  endpointId: string;
  aggregate: string;
  sequence: number;
  eventType: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: number;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: number | null;
  deadReason: string | null;
}

export const DELIVERY_COLUMNS = `id, event_id AS eventId, endpoint_id AS endpointId, aggregate, sequence,
  event_type AS eventType, status, attempt_count AS attemptCount, next_attempt_at AS nextAttemptAt,
  last_status_code AS lastStatusCode, last_error AS lastError, delivered_at AS deliveredAt, dead_reason AS deadReason`;

/** The delivery as it appears inside an event. */
export function deliveryInEvent(row: DeliveryRow) {
  return {
    id: row.id,
    endpointId: row.endpointId,
    status: row.status,
    attemptCount: row.attemptCount,
    nextAttemptAt: row.status === "pending" ? iso(row.nextAttemptAt) : null,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    deliveredAt: iso(row.deliveredAt),
    deadReason: row.deadReason,
  };
}

/** The delivery on its own: also names its event. */
export function deliveryView(row: DeliveryRow) {
  return {
    ...deliveryInEvent(row),
    eventId: row.eventId,
    type: row.eventType,
    aggregate: row.aggregate,
    sequence: row.sequence,
  };
}
export type DeliveryView = ReturnType<typeof deliveryView>;

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  endpoint?: string | undefined;
  reason?: string | undefined;
}

/** Newest first; `after` is the last id of the previous page. */
export function* listDeliveries(
  filter: DeliveryFilter,
  limit: number,
  after: string | undefined,
): Op<DeliveryView[]> {
  // Dead letters through their partial indexes (there may be a few among millions of delivered
  // rows: the planner must see `status = 'dead'` literally to use them); everything else newest
  // first along the primary key.
  const dead = filter.status === "dead";
  const source = !dead
    ? "deliveries"
    : filter.endpoint !== undefined
      ? "deliveries INDEXED BY deliveries_dead_endpoint"
      : "deliveries INDEXED BY deliveries_dead";
  const rows = yield* all<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM ${source}
     WHERE ${dead ? "status = 'dead'" : "(:status IS NULL OR status = :status)"}
       AND (:endpoint IS NULL OR endpoint_id = :endpoint)
       AND (:reason IS NULL OR dead_reason = :reason) AND (:after IS NULL OR id < :after)
     ORDER BY id DESC LIMIT :limit`,
    {
      ...(dead ? {} : { status: filter.status ?? null }),
      endpoint: filter.endpoint ?? null,
      reason: filter.reason ?? null,
      after: after ?? null,
      limit,
    },
  );
  return rows.map(deliveryView);
}

export function* getDelivery(id: string): Op<DeliveryView | undefined> {
  const row = yield* get<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = :id`, { id });
  return row ? deliveryView(row) : undefined;
}

export function* deliveriesOfEvent(eventId: string): Op<DeliveryRow[]> {
  return yield* all<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE event_id = :eventId ORDER BY id`,
    {
      eventId,
    },
  );
}

export interface AttemptView {
  at: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responsePrefix: string | null;
}

/** The attempt log of one delivery, oldest first. */
export function* listAttempts(deliveryId: string): Op<AttemptView[]> {
  const rows = yield* all<{
    startedAt: number;
    durationMs: number;
    statusCode: number | null;
    error: string | null;
    responsePrefix: string | null;
  }>(
    `SELECT started_at AS startedAt, duration_ms AS durationMs, status_code AS statusCode, error,
       response_prefix AS responsePrefix
     FROM attempts WHERE delivery_id = :deliveryId ORDER BY pos`,
    { deliveryId },
  );
  return rows.map(({ startedAt, ...rest }) => ({ at: iso(startedAt), ...rest }));
}

const REPLAY_SET = `status = 'pending', attempt_count = 0, next_attempt_at = :now, available_at = :now,
  deliver_by = :deliverBy, dead_reason = NULL, dead_at = NULL, lease_owner = NULL, lease_expires_at = NULL`;

export type ReplayOutcome = "replayed" | "not_found" | "not_dead" | "endpoint_deleted";

export function* replayDelivery(id: string, now: number, deliverBy: number): Op<ReplayOutcome> {
  const row = yield* get<{ status: string; endpointExists: number }>(
    `SELECT status, EXISTS (SELECT 1 FROM endpoints e WHERE e.id = d.endpoint_id) AS endpointExists
     FROM deliveries d WHERE id = :id`,
    { id },
  );
  if (!row) return "not_found";
  if (row.status !== "dead") return "not_dead";
  if (!row.endpointExists) return "endpoint_deleted";
  const queues = yield* all<Queue>(
    `UPDATE deliveries SET ${REPLAY_SET} WHERE id = :id AND status = 'dead'
     RETURNING endpoint_id AS endpointId, aggregate`,
    { id, now, deliverBy },
  );
  // An older event back in its queue may come before the current head: the head moves back.
  yield* resetHeads(queues);
  return "replayed";
}

export interface ReplayFilter {
  endpoint?: string | undefined;
  reason?: string | undefined;
  /** Only deliveries that went dead at or after this time (ms). */
  since?: number | undefined;
}

/**
 * Replays up to `limit` dead deliveries matching the filter (whose endpoint still exists) and
 * returns how many; callers loop until it returns 0, so a huge replay never holds the writer long.
 */
export function* replayDead(filter: ReplayFilter, now: number, deliverBy: number, limit: number): Op<number> {
  const queues = yield* all<Queue>(
    `UPDATE deliveries SET ${REPLAY_SET}
     WHERE id IN (SELECT d.id FROM deliveries d WHERE ${REPLAYABLE} LIMIT :limit)
     RETURNING endpoint_id AS endpointId, aggregate`,
    { ...replayArgs(filter, now), deliverBy, limit },
  );
  yield* resetHeads(distinctQueues(queues));
  return queues.length;
}

/** How many dead deliveries replayDead would take (for progress). */
export function* countReplayable(filter: ReplayFilter, now: number): Op<number> {
  const row = yield* get<{ n: number }>(
    `SELECT count(*) AS n FROM deliveries d WHERE ${REPLAYABLE}`,
    replayArgs(filter, now),
  );
  return row?.n ?? 0;
}

// Dead, matching the filter, dead before this replay began (so one that dies again during a
// long replay is not taken twice), and whose endpoint still exists.
const REPLAYABLE = `d.status = 'dead' AND (:endpoint IS NULL OR d.endpoint_id = :endpoint)
  AND (:reason IS NULL OR d.dead_reason = :reason) AND (:since IS NULL OR d.dead_at >= :since)
  AND d.dead_at < :now
  AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = d.endpoint_id)`;

function replayArgs(filter: ReplayFilter, now: number) {
  return {
    endpoint: filter.endpoint ?? null,
    reason: filter.reason ?? null,
    since: filter.since ?? null,
    now,
  };
}
