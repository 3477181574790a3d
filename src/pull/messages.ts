// A pull consumer's messages made by the lease statement itself (DESIGN §12): the UPDATE that
// leases the rows (src/deliveries/lease.ts) returns each one's message as JSON text, its `event`
// the §4 body assembled in SQLite from the event row with the stored payload spliced in as
// committed, so no event is read, parsed or stringified again in JavaScript and the batch costs
// one statement.
import { all, type Op } from "../db/op.ts";
import { LEASE_UPDATE, type LeaseRequest } from "../deliveries/lease.ts";

/**
 * One leased delivery as a consumer receives it: `json` is the whole message as JSON text,
 * `{"deliveryId", "leaseToken", "attempt", "event"}` with `event` the §4 body.
 */
export interface Pulled {
  deliveryId: string;
  leaseToken: string;
  json: string;
}

/**
 * The §4 body of the delivery row in scope (`deliveries`): byte for byte what webhookBody
 * (src/dispatch/sender.ts) makes of the same event. json_quote escapes as JSON.stringify does,
 * and strftime's %f with the time in ms gives toISOString's milliseconds (test/pull/pull.test.ts
 * compares both on awkward strings).
 */
export const EVENT_BODY = `(SELECT '{"id":' || json_quote(e.id) || ',"type":' || json_quote(e.type)
    || ',"timestamp":"' || strftime('%Y-%m-%dT%H:%M:%fZ', e.occurred_at / 1000.0, 'unixepoch')
    || '","aggregate":' || json_quote(e.aggregate) || ',"sequence":' || e.sequence
    || ',"previousSequence":' || coalesce(deliveries.previous_sequence, 'null')
    || ',"data":' || e.payload || '}'
  FROM events e WHERE e.id = deliveries.event_id)`;

/** Leases up to `limit` deliveries of a pull endpoint and returns them as messages, in one statement. */
export function* leaseMessages(request: LeaseRequest): Op<Pulled[]> {
  if (request.limit <= 0) return [];
  const pulled = yield* all<Pulled>(
    `${LEASE_UPDATE}
     RETURNING id AS deliveryId, lease_owner AS leaseToken,
       '{"deliveryId":' || json_quote(id) || ',"leaseToken":' || json_quote(lease_owner)
         || ',"attempt":' || attempt_count || ',"event":' || ${EVENT_BODY} || '}' AS json`,
    {
      endpointId: request.endpointId,
      now: request.now,
      leaseMs: request.leaseMs,
      limit: request.limit,
    },
  );
  for (const p of pulled) {
    // Events are never deleted (the ledger); a missing one would be a bug, not a client error.
    if (p.json === null) throw new Error(`the event of delivery ${p.deliveryId} is missing`);
  }
  return pulled;
}
