// Transition: in flight → pending (or dead), when a pull consumer's lease runs out unacknowledged
// (DESIGN §12: "a lease that runs out = a failed attempt, found by the sweep"). The attempt is
// logged and the row released through complete.ts like a nack, so it backs off, or dies past its
// deadline, and comes again (lease.ts takes no row whose consumer lease has not been released
// here). Webhook rows are not touched: a dispatcher's lost lease just makes the row claimable.
import { all, type Op } from "../db/op.ts";
import type { DecideFailure } from "./ack.ts";
import { type Completion, completeDeliveries } from "./complete.ts";
import type { Delivery } from "./read.ts";

const EXPIRY_CHUNK = 500;

export const LEASE_EXPIRED = "the lease ran out without an ack";

type Expired = Pick<
  Delivery,
  | "id"
  | "endpointId"
  | "eventId"
  | "aggregate"
  | "sequence"
  | "attemptCount"
  | "availableAt"
  | "deliverBy"
  | "leaseOwner"
> & { retrySchedule: string | null };

export interface ExpiredLease {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  aggregate: string;
  sequence: number;
  attempt: number;
  completion: Completion;
}

/** Records up to `limit` lapsed consumer leases as failed attempts; returns what it did. */
export function* expireConsumerLeases(
  now: number,
  decideFailure: DecideFailure,
  limit = EXPIRY_CHUNK,
): Op<ExpiredLease[]> {
  // Leased rows are pending heads; the pull endpoints are few, their heads found by index.
  const rows = yield* all<Expired>(
    `SELECT d.id, d.endpoint_id AS endpointId, d.event_id AS eventId, d.aggregate, d.sequence,
       d.attempt_count AS attemptCount, d.available_at AS availableAt, d.deliver_by AS deliverBy,
       d.lease_owner AS leaseOwner, e.retry_schedule AS retrySchedule
     FROM endpoints e JOIN deliveries d INDEXED BY deliveries_endpoint_ready ON d.endpoint_id = e.id
     WHERE e.kind = 'pull' AND d.status = 'pending' AND d.is_head = 1
       AND d.lease_owner IS NOT NULL AND d.lease_expires_at <= :now
     LIMIT :limit`,
    { now, limit },
  );
  const expired = rows.map((row) => ({
    row,
    completion: decideFailure(row, null, now),
  }));
  yield* completeDeliveries(
    expired.map(({ row, completion }) => ({
      attempt: {
        deliveryId: row.id,
        owner: row.leaseOwner as string,
        endpointId: row.endpointId,
        aggregate: row.aggregate,
        startedAt: now,
        durationMs: 0,
        statusCode: null,
        error: LEASE_EXPIRED,
        responsePrefix: null,
      },
      completion,
    })),
  );
  return expired.map(({ row, completion }) => ({
    deliveryId: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    aggregate: row.aggregate,
    sequence: row.sequence,
    attempt: row.attemptCount,
    completion,
  }));
}
