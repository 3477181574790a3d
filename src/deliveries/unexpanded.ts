// The deliveries a commit named whose deferred fan-out (enqueue.ts) is not expanded yet: read
// as the rows they become, and cancelled where they wait, so a delivery id in a commit's answer
// is found by GET and cancel from the moment the commit answers (DESIGN §2).
import { exec, get, type Op } from "../db/op.ts";

/**
 * A delivery a commit named that its deferred fan-out has not expanded yet, as the deliveries
 * table would show it (read.ts DeliveryRow): pending, or dead once cancelled (a cancelled target
 * carries the time of its cancel as a third element, [id, endpointId, cancelledAt]).
 */
export function* unexpandedDelivery(id: string): Op<UnexpandedRow | undefined> {
  return yield* get<UnexpandedRow>(
    `SELECT t.value ->> 0 AS id, f.event_id AS eventId, t.value ->> 1 AS endpointId, f.aggregate, f.sequence,
       f.event_type AS eventType, CASE WHEN t.value ->> 2 IS NULL THEN 'pending' ELSE 'dead' END AS status,
       0 AS attemptCount, f.available_at AS nextAttemptAt, NULL AS lastStatusCode, NULL AS lastError,
       NULL AS deliveredAt, CASE WHEN t.value ->> 2 IS NULL THEN NULL ELSE 'cancelled' END AS deadReason,
       f.pos, t.key AS target
     FROM fan_outs f, json_each(f.targets) t WHERE t.key >= f.done AND t.value ->> 0 = :id LIMIT 1`,
    { id },
  );
}

export interface UnexpandedRow {
  id: string;
  eventId: string;
  endpointId: string;
  aggregate: string;
  sequence: number;
  eventType: string;
  status: "pending" | "dead";
  attemptCount: number;
  nextAttemptAt: number;
  lastStatusCode: null;
  lastError: null;
  deliveredAt: null;
  deadReason: "cancelled" | null;
  /** Where it waits: its fan_outs row and its index among that row's targets. */
  pos: number;
  target: number;
}

/**
 * Cancels a delivery its fan-out has not expanded yet (cancel.ts): its target is marked with the
 * time of the cancel, and the expansion (enqueue.ts) writes it as a dead, `cancelled` row.
 */
export function* cancelUnexpanded(row: UnexpandedRow, now: number): Op<void> {
  yield* exec(
    "UPDATE fan_outs SET targets = json_set(targets, '$[' || :target || '][2]', :now) WHERE pos = :pos",
    { target: row.target, now, pos: row.pos },
  );
}
