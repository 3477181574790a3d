// Transition: pending → in flight, for a consumer of a pull endpoint (DESIGN §12 poll and
// stream). The same rule as the dispatcher's claim (claim.ts CLAIMABLE_NOW: due, not leased,
// before its deadline, the head of its (endpoint, aggregate) queue, endpoint enabled), so at most
// one delivery per (endpoint, aggregate) is leased at a time, in sequence order, whoever polls.
// Each row gets its own lease token in lease_owner: the fence of its ack or nack (ack.ts).
//
// One difference, on purpose: a row whose consumer lease ran out is not taken again here until
// the sweep has recorded that as a failed attempt and released it (lease-expiry.ts), so every
// lost lease is in the attempt log and backs off like any failure (§12 "a lease that runs out
// = a failed attempt").
import { all, get, type Op } from "../db/op.ts";
import { CLAIMABLE_NOW } from "./claim.ts";

export interface LeaseRequest {
  endpointId: string;
  now: number;
  leaseMs: number;
  /** At most this many (poll `max`; for a stream, its free window). */
  limit: number;
}

/**
 * The lease as an UPDATE of `deliveries` (binds :endpointId, :now, :leaseMs, :limit): up to
 * :limit claimable deliveries of one pull endpoint, oldest due first, each under a fresh random
 * lease token, in one statement. The caller adds what the statement returns (src/pull builds
 * the consumer's message there). Rows are picked by rowid: no second lookup through the key.
 */
export const LEASE_UPDATE = `UPDATE deliveries
  SET lease_owner = 'lt_' || lower(hex(randomblob(16))), lease_expires_at = :now + :leaseMs,
    attempt_count = attempt_count + 1
  WHERE rowid IN (
    SELECT d.rowid FROM deliveries d INDEXED BY deliveries_endpoint_ready
    WHERE d.endpoint_id = :endpointId AND d.lease_owner IS NULL AND ${CLAIMABLE_NOW}
    ORDER BY d.next_attempt_at LIMIT :limit)`;

/**
 * When the endpoint's next head that is not due yet becomes due (a retry, a deliverAfter), or
 * null: how long a long poll may sleep before it must look again, whatever else wakes it (a lease
 * that runs out wakes it through the sweep). One index seek, made only when a poll comes back
 * empty.
 */
export function* nextDueAt(endpointId: string, now: number): Op<number | null> {
  const row = yield* get<{ at: number | null }>(
    `SELECT min(d.next_attempt_at) AS at FROM deliveries d INDEXED BY deliveries_endpoint_ready
     WHERE d.endpoint_id = :endpointId AND d.status = 'pending' AND d.is_head = 1 AND d.next_attempt_at > :now`,
    { endpointId, now },
  );
  return row?.at ?? null;
}

/** Of these endpoints, those with a delivery a consumer could lease now (the sweep's fallback). */
export function* endpointsWithWork(endpointIds: string[], now: number): Op<string[]> {
  const rows = yield* all<{ id: string }>(
    `SELECT w.value AS id FROM json_each(:ids) w
     WHERE EXISTS (SELECT 1 FROM deliveries d INDEXED BY deliveries_endpoint_ready
       WHERE d.endpoint_id = w.value AND d.lease_owner IS NULL AND ${CLAIMABLE_NOW})`,
    { ids: JSON.stringify(endpointIds), now },
  );
  return rows.map((r) => r.id);
}
