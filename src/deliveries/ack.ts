// Transitions out of in flight for a pull endpoint's consumer (DESIGN §12 ack): an ack is the
// consumer's 2xx (→ delivered), a nack a failed attempt (→ pending at a later time, or → dead
// past the deadline). Both go through complete.ts, so the fence, the queue heads, the counters
// and the attempt log are kept exactly as for webhooks.
// Invariants kept here:
//   - fenced by the lease token: only the row's current lease_owner may ack or nack it; a lost
//     lease, an unknown id or another endpoint's delivery is reported stale and changes nothing;
//   - a delivered pull row keeps the token that acked it in lease_owner (lease_expires_at NULL),
//     so an ack repeated under that token counts as acked again instead of stale (a consumer
//     whose first ack's answer was lost must not be told it lost the delivery).
import { all, exec, type Op } from "../db/op.ts";
import { type AttemptRecord, type Completion, type CompletionItem, completeDeliveries } from "./complete.ts";
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
export type FailedRow = Pick<Delivery, "attemptCount" | "availableAt" | "deliverBy">;

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

export function* ackDeliveries(request: AckRequest): Op<AckResult> {
  const { endpointId, now } = request;
  const ids = [...new Set([...request.acks, ...request.nacks].map((a) => a.deliveryId))];
  const found = yield* all<Row>(
    `SELECT id, endpoint_id AS endpointId, event_id AS eventId, aggregate, sequence, status,
       lease_owner AS leaseOwner, attempt_count AS attemptCount, available_at AS availableAt,
       deliver_by AS deliverBy
     FROM deliveries WHERE id IN (SELECT value FROM json_each(:ids))`,
    { ids: JSON.stringify(ids) },
  );
  // Another endpoint's delivery is as unknown here as one that does not exist.
  const rows = new Map(found.filter((r) => r.endpointId === endpointId).map((r) => [r.id, { ...r }]));
  const result: AckResult = { acked: 0, nacked: 0, stale: [], answered: [] };
  const items: CompletionItem[] = [];
  const record = (row: Row, token: string, error: string | null): AttemptRecord => ({
    deliveryId: row.id,
    owner: token,
    endpointId,
    aggregate: row.aggregate,
    startedAt: now,
    durationMs: 0,
    statusCode: null,
    error,
    responsePrefix: error === null ? ACK_RESPONSE : null,
  });
  // In request order, acks first; each changes the row as later entries of this request see it.
  for (const ack of request.acks) {
    const row = rows.get(ack.deliveryId);
    if (row?.leaseOwner !== ack.leaseToken || row.status === "dead") {
      result.stale.push(ack.deliveryId);
      continue;
    }
    result.acked += 1;
    if (row.status === "delivered") continue; // repeated under the token that acked it
    const completion: Completion = { kind: "delivered", at: now, latencyMs: now - row.availableAt };
    items.push({ attempt: record(row, ack.leaseToken, null), completion });
    result.answered.push(answered(row, completion));
    row.status = "delivered";
  }
  for (const nack of request.nacks) {
    const row = rows.get(nack.deliveryId);
    if (row?.leaseOwner !== nack.leaseToken || row.status !== "pending") {
      result.stale.push(nack.deliveryId);
      continue;
    }
    result.nacked += 1;
    const completion = request.decideFailure(row, nack.retryAfterMs, now);
    const asked = nack.retryAfterMs === null ? "" : ` (retryAfter ${nack.retryAfterMs} ms)`;
    items.push({ attempt: record(row, nack.leaseToken, `nacked by a consumer${asked}`), completion });
    result.answered.push(answered(row, completion));
    row.leaseOwner = null;
  }
  yield* completeDeliveries(items);
  const delivered = items.filter((item) => item.completion.kind === "delivered");
  if (delivered.length > 0) {
    // complete.ts released the lease; the acking token stays as the row's proof of who acked it.
    yield* exec(
      `UPDATE deliveries SET lease_owner = b.token
       FROM (SELECT value ->> '$.id' AS id, value ->> '$.token' AS token FROM json_each(:rows)) AS b
       WHERE deliveries.id = b.id AND deliveries.status = 'delivered'`,
      { rows: JSON.stringify(delivered.map((i) => ({ id: i.attempt.deliveryId, token: i.attempt.owner }))) },
    );
  }
  return result;
}

function answered(row: Row, completion: Completion): Answered {
  return {
    deliveryId: row.id,
    eventId: row.eventId,
    aggregate: row.aggregate,
    sequence: row.sequence,
    attempt: row.attemptCount,
    completion,
  };
}
