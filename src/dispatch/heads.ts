// The head of a queue: per (endpoint, aggregate), the pending delivery with the lowest sequence
// carries is_head = 1, every other pending one 0. The claim takes heads only, which is what
// keeps order per aggregate (n+1 waits while n is pending, due or not) and what keeps a claim's
// cost independent of the backlog. Every operation that moves deliveries into or out of
// `pending` keeps this true in the same transaction.
import { type Op, run } from "../db/op.ts";

export interface Queue {
  endpointId: string;
  aggregate: string;
}

/** For a new delivery: 1 if its queue has no pending delivery yet (it is then the head). */
export const IS_FIRST_IN_QUEUE = `NOT EXISTS (SELECT 1 FROM deliveries q
  WHERE q.status = 'pending' AND q.endpoint_id = :endpointId AND q.aggregate = :aggregate)`;

/**
 * After deliveries left `pending` (delivered, dead): the queue's lowest pending sequence, if any,
 * becomes its head. Cheap: every other pending row of the queue is already 0.
 */
export function* promoteHeads(queues: Iterable<Queue>): Op<void> {
  for (const queue of queues) {
    yield* run(
      `UPDATE deliveries SET is_head = 1
       WHERE id = (SELECT id FROM deliveries
                   WHERE status = 'pending' AND endpoint_id = :endpointId AND aggregate = :aggregate
                   ORDER BY sequence LIMIT 1)
         AND is_head = 0`,
      { endpointId: queue.endpointId, aggregate: queue.aggregate },
    );
  }
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

/** The distinct queues of some rows (RETURNING endpoint_id AS endpointId, aggregate). */
export function distinctQueues(rows: Queue[]): Queue[] {
  const seen = new Map<string, Queue>();
  for (const row of rows) seen.set(`${row.endpointId}\u0000${row.aggregate}`, row);
  return [...seen.values()];
}
