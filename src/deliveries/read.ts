// Reads of deliveries and their attempt log (DESIGN §3 Events and deliveries): no transition
// here, only what the API, the CLI and the dashboard show.
import { all, get, type Op } from "../db/op.ts";
import type { deliveries } from "../db/schema.ts";
import { iso } from "../lib/time.ts";
import { unexpandedDelivery } from "./unexpanded.ts";

/** A row of the deliveries table as drizzle's schema types it (src/db/schema.ts). */
export type Delivery = typeof deliveries.$inferSelect;

export type DeliveryStatus = Delivery["status"];

/** The columns DELIVERY_COLUMNS selects, under their schema names. */
export type DeliveryRow = Pick<
  Delivery,
  | "id"
  | "eventId"
  | "endpointId"
  | "aggregate"
  | "sequence"
  | "eventType"
  | "status"
  | "attemptCount"
  | "nextAttemptAt"
  | "lastStatusCode"
  | "lastError"
  | "deliveredAt"
  | "deadReason"
>;

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

/**
 * A delivery by id; one a commit named whose deferred fan-out is not expanded yet is shown as
 * the row it becomes (enqueue.ts unexpandedDelivery): found from the moment the commit answers.
 */
export function* getDelivery(id: string): Op<DeliveryView | undefined> {
  const row =
    (yield* get<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = :id`, { id })) ??
    (yield* unexpandedDelivery(id));
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

/**
 * Whether attempt `a` is the success that delivery row `d` points at (deliveries.delivered_attempt).
 * The position alone is not enough: attempts.pos has no AUTOINCREMENT, so once the newest attempt
 * is pruned its position can be given again, to another delivery's attempt (retention.ts).
 */
export const POINTED_SUCCESS = (a: string, d: string): string =>
  `${a}.pos = ${d}.delivered_attempt AND ${a}.delivery_id = ${d}.id AND ${a}.on_delivery = 1`;

/**
 * The attempt log of one delivery, oldest first: those of attempts_delivery, and the success its
 * row records (deliveries.delivered_attempt), which is not in that index (schema.ts attempts).
 */
export function* listAttempts(deliveryId: string): Op<AttemptView[]> {
  const rows = yield* all<{
    pos: number;
    startedAt: number;
    durationMs: number;
    statusCode: number | null;
    error: string | null;
    responsePrefix: string | null;
  }>(
    `SELECT pos, started_at AS startedAt, duration_ms AS durationMs, status_code AS statusCode, error,
       response_prefix AS responsePrefix
     FROM attempts WHERE delivery_id = :deliveryId AND on_delivery IS NULL
     UNION ALL
     SELECT a.pos, a.started_at, a.duration_ms, a.status_code, a.error, a.response_prefix
     FROM deliveries d JOIN attempts a ON ${POINTED_SUCCESS("a", "d")} WHERE d.id = :deliveryId
     ORDER BY pos`,
    { deliveryId },
  );
  return rows.map(({ pos: _pos, startedAt, ...rest }) => ({ at: iso(startedAt), ...rest }));
}
