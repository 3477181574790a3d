// Transitions out of in flight for a pull endpoint's consumer (DESIGN §12 ack): an ack is the
// consumer's 2xx (→ delivered), a nack a failed attempt (→ pending at a later time, or → dead
// past the deadline). Both go through complete.ts, so the fence, the queue heads, the counters
// and the attempt log are kept exactly as for webhooks.
// Invariants kept here:
//   - fenced by the lease token: only the row's current lease_owner may ack or nack it; a lost
//     lease, an unknown id or another endpoint's delivery is reported stale and changes nothing;
//   - a delivered pull row keeps the token that acked it in lease_owner (lease_expires_at NULL),
//     so an ack repeated under that token counts as acked again instead of stale (a consumer
//     whose first ack's answer was lost must not be told it lost the delivery); so does the same
//     delivery listed twice in one request.
import { all, exec, type Op } from "../db/op.ts";
import { type Completion, type CompletionItem, completeDeliveries, touchEndpointHealth } from "./complete.ts";
import { recordDeliveredMany } from "./counters.ts";
import { promoteHeads } from "./heads.ts";
import type { Delivery } from "./read.ts";

export interface LeaseRef {
  deliveryId: string;
  leaseToken: string;
}

export interface Nack extends LeaseRef {
  /** How long the consumer asks to wait before the next attempt; null = the backoff. */
  retryAfterMs: number | null;
}

/** What a nack decision needs of its row. */
export type FailedRow = Pick<Delivery, "attemptCount" | "availableAt" | "deliverBy"> & {
  /** Its endpoint's retrySchedule (DESIGN §19), JSON text or null. */
  retrySchedule: string | null;
};

/** A failed attempt's outcome: a retry or, past the deadline, dead (the dispatcher's rule). */
export type DecideFailure = (row: FailedRow, retryAfterMs: number | null, now: number) => Completion;

export interface AckRequest {
  endpointId: string;
  now: number;
  acks: LeaseRef[];
  nacks: Nack[];
  decideFailure: DecideFailure;
}

/** One ack or nack that changed its delivery (for metrics, logs and wake-ups). */
export interface Answered {
  deliveryId: string;
  eventId: string;
  aggregate: string;
  sequence: number;
  attempt: number;
  completion: Completion;
}

export interface AckResult {
  acked: number;
  nacked: number;
  stale: string[];
  answered: Answered[];
}

type Row = Pick<
  Delivery,
  "id" | "endpointId" | "eventId" | "aggregate" | "sequence" | "status" | "leaseOwner" | "attemptCount"
> &
  FailedRow;

export const ACK_RESPONSE = "acknowledged by a consumer";
/** A nack's error in the attempt log (followed by the retryAfter the consumer asked for, if any). */
export const NACKED = "nacked by a consumer";

export function* ackDeliveries(request: AckRequest): Op<AckResult> {
  const { endpointId, now } = request;
  const result: AckResult = { acked: 0, nacked: 0, stale: [], answered: [] };
  // Acks first, set-based: the rows still leased under the acking token become delivered.
  const delivered = yield* deliverAcked(endpointId, now, request.acks);
  const fresh = new Map(delivered.map((d) => [d.id, d.token]));
  // What else the request names (repeated or stale acks, nacks), read after those acks.
  const others = [
    ...new Set([
      ...request.acks.filter((a) => !fresh.has(a.deliveryId)).map((a) => a.deliveryId),
      ...request.nacks.map((n) => n.deliveryId),
    ]),
  ];
  const found =
    others.length === 0
      ? []
      : yield* all<Row>(
          `SELECT id, endpoint_id AS endpointId, event_id AS eventId, aggregate, sequence, status,
             lease_owner AS leaseOwner, attempt_count AS attemptCount, available_at AS availableAt,
             deliver_by AS deliverBy,
             (SELECT e.retry_schedule FROM endpoints e WHERE e.id = deliveries.endpoint_id) AS retrySchedule
           FROM deliveries WHERE id IN (SELECT value FROM json_each(:ids))`,
          { ids: JSON.stringify(others) },
        );
  // Another endpoint's delivery is as unknown here as one that does not exist.
  const rows = new Map(found.filter((r) => r.endpointId === endpointId).map((r) => [r.id, { ...r }]));
  for (const row of delivered) {
    const completion: Completion = { kind: "delivered", at: now, latencyMs: now - row.availableAt };
    result.answered.push(answered(row, completion));
  }
  // In request order; each entry sees the row as the entries before it left it.
  for (const ack of request.acks) {
    // Delivered by this request under this token (an id listed twice counts twice): acked.
    if (fresh.get(ack.deliveryId) === ack.leaseToken) {
      result.acked += 1;
      continue;
    }
    const row = rows.get(ack.deliveryId);
    // Repeated under the token that acked it: acked again. Anything else: stale.
    if (row?.leaseOwner === ack.leaseToken && row.status === "delivered") result.acked += 1;
    else result.stale.push(ack.deliveryId);
  }
  const items: CompletionItem[] = [];
  for (const nack of request.nacks) {
    const row = rows.get(nack.deliveryId);
    if (row?.leaseOwner !== nack.leaseToken || row.status !== "pending") {
      result.stale.push(nack.deliveryId);
      continue;
    }
    result.nacked += 1;
    const completion = request.decideFailure(row, nack.retryAfterMs, now);
    const asked = nack.retryAfterMs === null ? "" : ` (retryAfter ${nack.retryAfterMs} ms)`;
    items.push({
      attempt: {
        deliveryId: row.id,
        owner: nack.leaseToken,
        endpointId,
        startedAt: now,
        durationMs: 0,
        statusCode: null,
        error: `${NACKED}${asked}`,
        responsePrefix: null,
      },
      completion,
    });
    result.answered.push(answered(row, completion));
    row.leaseOwner = null;
  }
  yield* completeDeliveries(items);
  return result;
}

type DeliveredRow = Pick<
  Delivery,
  "id" | "eventId" | "aggregate" | "sequence" | "attemptCount" | "availableAt"
> & {
  /** The lease token it was acked under (it stays in lease_owner). */
  token: string;
};

/**
 * The acks' transition to delivered, as complete.ts does it for a batch of 2xx (attempt log,
 * fenced update, next heads, minute buckets, endpoint health), in one statement per step for
 * the whole batch: the fence is the UPDATE's own condition (still pending, leased under the
 * acking token, of this endpoint), and the token stays in lease_owner as the proof of who acked.
 */
function* deliverAcked(endpointId: string, now: number, acks: LeaseRef[]): Op<DeliveredRow[]> {
  if (acks.length === 0) return [];
  const rows = yield* all<DeliveredRow>(
    `UPDATE deliveries SET status = 'delivered', delivered_at = :now, lease_expires_at = NULL,
       last_status_code = NULL, last_error = NULL
     FROM (SELECT value ->> 0 AS id, value ->> 1 AS token FROM json_each(:acks)) AS b
     WHERE deliveries.id = b.id AND deliveries.lease_owner = b.token AND deliveries.status = 'pending'
       -- (unary +: by primary key, never by an index of the endpoint's pending rows)
       AND +deliveries.endpoint_id = :endpointId
     RETURNING id, event_id AS eventId, aggregate, sequence, attempt_count AS attemptCount,
       available_at AS availableAt, lease_owner AS token`,
    { now, endpointId, acks: JSON.stringify(acks.map((a) => [a.deliveryId, a.leaseToken])) },
  );
  if (rows.length === 0) return rows;
  yield* exec(
    `INSERT INTO attempts (delivery_id, started_at, duration_ms, status_code, error, response_prefix)
     SELECT value, :now, 0, NULL, NULL, :response FROM json_each(:ids)`,
    { now, response: ACK_RESPONSE, ids: JSON.stringify(rows.map((r) => r.id)) },
  );
  yield* promoteHeads(rows.map((r) => r.id));
  yield* recordDeliveredMany(rows.map((r) => ({ endpointId, at: now, latencyMs: now - r.availableAt })));
  yield* touchEndpointHealth(endpointId, { kind: "delivered", at: now, latencyMs: 0 });
  return rows;
}

function answered(row: Omit<DeliveredRow, "token">, completion: Completion): Answered {
  return {
    deliveryId: row.id,
    eventId: row.eventId,
    aggregate: row.aggregate,
    sequence: row.sequence,
    attempt: row.attemptCount,
    completion,
  };
}
