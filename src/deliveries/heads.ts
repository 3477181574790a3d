// The queue-head invariant. Per (endpoint, aggregate) queue, the pending delivery with the
// lowest sequence carries is_head = 1 and every other pending one 0:
//
//     for every queue Q with a pending row:
//       exactly one pending row of Q has is_head = 1, and it has Q's lowest pending sequence
//
// The claim takes heads only, which is what keeps order per aggregate (n+1 waits while n is
// pending, due or not) and what keeps a claim's cost independent of the backlog. Who keeps it:
//   - enqueue.ts: a new row is the head iff its queue has no pending row yet (sequences only
//     grow within an aggregate, so a later row never comes before an existing head);
//   - complete.ts, expire.ts (rows leave pending): promoteHeads on their queues;
//   - replay.ts (rows re-enter pending, possibly older than the head): resetHeads;
//   - dead-letter.ts deadLetterEndpoint: every pending row of the endpoint leaves, so none of
//     its queues has a pending row left and there is no head to keep.
// Every one of them runs in the same transaction as the change that needs it.
import { allHinted, type Op, run } from "../db/op.ts";

export interface Queue {
  endpointId: string;
  aggregate: string;
}

/** For a new delivery: 1 if its queue has no pending delivery yet (it is then the head). */
export const IS_FIRST_IN_QUEUE = `NOT EXISTS (SELECT 1 FROM deliveries q
  WHERE q.status = 'pending' AND q.endpoint_id = :endpointId AND q.aggregate = :aggregate)`;

/** A delivery that became the head of its queue. */
export interface PromotedHead {
  id: string;
  endpointId: string;
}

/**
 * After deliveries left `pending` (delivered, dead): the queue's lowest pending sequence, if any,
 * becomes its head. Cheap: every other pending row of the queue is already 0. One statement for
 * all the queues (a completion batch promotes hundreds at once). Returns the new heads (the
 * dispatcher claims them by id: claim.ts claimDeliveriesById); the remote write path answers
 * none (op.ts Statement.hint), and its dispatcher finds them by its scan.
 */
export function* promoteHeads(queues: Iterable<Queue>): Op<PromotedHead[]> {
  const list = [...queues];
  if (list.length === 0) return [];
  return yield* allHinted<PromotedHead>(
    `UPDATE deliveries SET is_head = 1
     WHERE id IN (
       SELECT (SELECT p.id FROM deliveries p
               WHERE p.status = 'pending' AND p.endpoint_id = q.value ->> 0
                 AND p.aggregate = q.value ->> 1
               ORDER BY p.sequence LIMIT 1)
       FROM json_each(:queues) q)
       AND is_head = 0
     RETURNING id, endpoint_id AS endpointId`,
    { queues: JSON.stringify(list.map((q) => [q.endpointId, q.aggregate])) },
  );
}

/**
 * After deliveries re-entered `pending` out of order (a replay of an older event): recomputes
 * the head of each queue from scratch.
 */
export function* resetHeads(queues: Iterable<Queue>): Op<void> {
  for (const queue of queues) {
    yield* run(
      `UPDATE deliveries SET is_head = (sequence = (
         SELECT min(p.sequence) FROM deliveries p
         WHERE p.status = 'pending' AND p.endpoint_id = :endpointId AND p.aggregate = :aggregate))
       WHERE status = 'pending' AND endpoint_id = :endpointId AND aggregate = :aggregate`,
      { endpointId: queue.endpointId, aggregate: queue.aggregate },
    );
  }
}

/** What an UPDATE … RETURNING must return for its queues to be kept (see distinctQueues). */
export const RETURNING_QUEUE = "RETURNING endpoint_id AS endpointId, aggregate";

/** The distinct queues of some rows (RETURNING_QUEUE). */
export function distinctQueues(rows: Queue[]): Queue[] {
  const seen = new Map<string, Queue>();
  for (const row of rows) seen.set(`${row.endpointId}\u0000${row.aggregate}`, row);
  return [...seen.values()];
}
