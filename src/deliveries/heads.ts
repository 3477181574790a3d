// The queue-head invariant. Per (endpoint, aggregate) queue, the pending delivery with the
// lowest sequence carries is_head = 1 and every other pending one 0:
//
//     for every queue Q with a pending row:
//       exactly one pending row of Q has is_head = 1, and it has Q's lowest pending sequence
//
// The claim takes heads only, which is what keeps order per aggregate (n+1 waits while n is
// pending, due or not) and what keeps a claim's cost independent of the backlog. Who keeps it:
//   - enqueue.ts: a new row is the head iff its queue has no head yet (a queue has a pending row
//     iff it has a head; sequences only grow within an aggregate, so a later row never comes
//     before an existing head);
//   - complete.ts, expire.ts, cancel.ts, ack.ts (rows leave pending): promoteHeads on their queues;
//   - replay.ts (rows re-enter pending, possibly older than the head): resetHeads, which also
//     keeps one lease per queue: a replayed head waits for the lease of a later row it displaces;
//   - dead-letter.ts deadLetterEndpoint: every pending row of the endpoint leaves, so none of
//     its queues has a pending row left and there is no head to keep.
// Every one of them runs in the same transaction as the change that needs it.
//
// Only heads are indexed by queue (deliveries_heads): a row waiting behind its head is in no
// index of its queue. When a head leaves, the next one is found by walking the aggregate's
// events from the head's sequence on (events_aggregate_sequence), each event's deliveries by
// deliveries_event, to the first still pending to that endpoint: usually the very next event.
// Events are never deleted (an erasure keeps the row), so the walk misses no queued row. It
// steps over events the endpoint does not take (another type) or not expanded yet (a deferred
// fan-out: then no later event of the aggregate has deliveries either, enqueue.ts); each such
// event is stepped over at most once per queue, by the walk from the head before it.
import { type Args, all, allHinted, exec, type Op } from "../db/op.ts";
import { CLAIMED_COLUMNS, type ClaimedDelivery, dispatchableEndpoint, leasableRow } from "./claim.ts";
import { chunks, type RowsKind, rowsStatement } from "./rows.ts";

export interface Queue {
  endpointId: string;
  aggregate: string;
}

/** A row of a queue: which queue, and where in it (what RETURNING_QUEUE returns). */
export interface QueuedRow extends Queue {
  id: string;
  sequence: number;
}

/** For a new delivery: 1 if its queue has no pending row yet (it has no head), when the new row is the head. */
export const IS_FIRST_IN_QUEUE = `NOT EXISTS (SELECT 1 FROM deliveries q INDEXED BY deliveries_heads
  WHERE q.endpoint_id = :endpointId AND q.aggregate = :aggregate AND q.status = 'pending' AND q.is_head = 1)`;

/** Whether the queue of row `q` (q.endpointId, q.aggregate) has a head. */
const HAS_HEAD = `EXISTS (SELECT 1 FROM deliveries h INDEXED BY deliveries_heads
  WHERE h.endpoint_id = q.endpointId AND h.aggregate = q.aggregate AND h.status = 'pending' AND h.is_head = 1)`;

/** A delivery that became the head of its queue. */
export interface PromotedHead {
  /** Its rowid (the dispatcher keeps it with a hint). */
  rid: number;
  id: string;
  endpointId: string;
}

/** Where a row that left pending was in its queue (what the dispatcher knows of what it sent). */
export interface QueuePosition extends Queue {
  sequence: number;
}

/**
 * After deliveries left `pending` (delivered, dead; their ids): each of their queues that has no
 * head now gets its lowest pending row as the head, found after the lowest sequence that left
 * (every pending row of a queue comes after its head). A queue whose head did not leave (a later
 * row expired or was cancelled) keeps it. One statement for all the queues (a completion batch
 * promotes hundreds at once; each new head is updated by its rowid, without a lookup of the id
 * index). Returns the new heads (hints for the dispatcher's claims by id; on a local file its
 * completions lease them in the promotion itself: promoteAndLease); the remote write path answers
 * none (op.ts Statement.hint), and its dispatcher finds them by its scan.
 */
export function* promoteHeads(left: Iterable<string>): Op<PromotedHead[]> {
  const ids = [...left];
  if (ids.length === 0) return [];
  return yield* allHinted<PromotedHead>(
    `WITH q AS (
       SELECT l.endpoint_id AS endpointId, l.aggregate, min(l.sequence) AS after
       FROM deliveries l WHERE l.id IN (SELECT value FROM json_each(:ids))
       GROUP BY l.endpoint_id, l.aggregate)
     ${PROMOTE_NEXT}`,
    { ids: JSON.stringify(ids) },
  );
}

/**
 * promoteHeads for rows whose queue and sequence the caller knows (the dispatcher's completions:
 * it sent them): the same promotion, without looking each row up by id to learn where it was.
 * Each position must be the row's own (a delivery's queue and sequence never change): the walk
 * for the next head starts after it.
 */
export function* promoteQueues(left: Iterable<QueuePosition>): Op<PromotedHead[]> {
  return yield* overQueues<PromotedHead>(left, PROMOTE_NEXT, {});
}

/** A lease the promotion gives the heads it makes that a claim could take now (promoteAndLease). */
export interface PromotionLease {
  /** A token of this promotion's own: the rows leased carry it (claim.ts ClaimRequest.owner). */
  owner: string;
  now: number;
  leaseMs: number;
}

/** A head promoteAndLease made, with what a claim returns of it, and whether it leased it. */
export type LeasedHead = PromotedHead & ClaimedDelivery & { rid: number; leased: 0 | 1 };

/**
 * promoteQueues that also leases, in the same statement, each head it makes that a claim could
 * take now (claim.ts CLAIMABLE_NOW: due, not leased or its lease ran out, before its deadline, at
 * an enabled webhook endpoint; it is pending and now the head), under `lease.owner`: the row is
 * written once, where a claim after the promotion would write it a second time. `leased` says
 * which; the caller gives back what it cannot take (claim.ts
 * releaseLeases). Local files only (the dispatcher's completeAndClaim): the remote write path
 * answers no rows of a write but its last, so its dispatcher claims apart.
 */
export function* promoteAndLease(left: Iterable<QueuePosition>, lease: PromotionLease): Op<LeasedHead[]> {
  const args = { owner: lease.owner, now: lease.now, leaseMs: lease.leaseMs };
  return yield* overQueues<LeasedHead>(left, PROMOTE_AND_LEASE, args);
}

const HINTED: RowsKind = { kind: "all", hint: true };

/**
 * `rest` (PROMOTE_NEXT or PROMOTE_AND_LEASE) over the queues of `left` as the list `q`, in lists
 * of at most MAX_ROWS (rows.ts): the rows of every list's answer.
 */
function* overQueues<T>(left: Iterable<QueuePosition>, rest: string, args: Args): Op<T[]> {
  const answered: T[] = [];
  for (const list of chunks(queuesLeft(left)))
    answered.push(...((yield rowsStatement("q", QUEUE_COLUMNS, list, rest, args, HINTED)) as T[]));
  return answered;
}

/** The rows of `q` (rows.ts): a queue and the lowest sequence that left it. */
const QUEUE_COLUMNS = ["endpointId", "aggregate", "after"];

/** Each queue of `left` once, with the lowest sequence that left it (every pending row of the queue comes after it). */
function queuesLeft(left: Iterable<QueuePosition>): [string, string, number][] {
  // By endpoint, then aggregate: no key made per row (a batch is mostly one endpoint's).
  const byEndpoint = new Map<string, Map<string, [string, string, number]>>();
  const queues: [string, string, number][] = [];
  for (const { endpointId, aggregate, sequence } of left) {
    let lowest = byEndpoint.get(endpointId);
    if (lowest === undefined) {
      lowest = new Map();
      byEndpoint.set(endpointId, lowest);
    }
    const seen = lowest.get(aggregate);
    if (seen === undefined) {
      const queue: [string, string, number] = [endpointId, aggregate, sequence];
      lowest.set(aggregate, queue);
      queues.push(queue);
    } else if (sequence < seen[2]) seen[2] = sequence;
  }
  return queues;
}

/**
 * The rowid of the lowest pending row of queue `q` after q.after: the walk of the aggregate's
 * events from there (see the header).
 */
const NEXT_OF_QUEUE = `(SELECT d.rowid FROM events e CROSS JOIN deliveries d INDEXED BY deliveries_event
               WHERE e.aggregate = q.aggregate AND e.sequence > q.after
                 AND d.event_id = e.id AND d.endpoint_id = q.endpointId AND d.status = 'pending'
               ORDER BY e.sequence LIMIT 1)`;

/**
 * The promotion itself, of the queues `q` (endpointId, aggregate, after: the lowest sequence that
 * left) that have no head: their next rows become the heads (returned as PromotedHead).
 */
const PROMOTE_NEXT = `UPDATE deliveries SET is_head = 1
     WHERE rowid IN (SELECT ${NEXT_OF_QUEUE} FROM q WHERE q.endpointId IS NOT NULL AND NOT ${HAS_HEAD})
     RETURNING rowid AS rid, id, endpoint_id AS endpointId`;

/**
 * PROMOTE_NEXT that also leases each head it makes that a claim could take now (promoteAndLease):
 * the walk materialized with whether the queue's endpoint is open, then one UPDATE by rowid.
 */
const LEASABLE = `n.open AND ${leasableRow("deliveries")}`;
const PROMOTE_AND_LEASE = `, n AS MATERIALIZED (
       SELECT ${NEXT_OF_QUEUE} AS rid, ${dispatchableEndpoint("q.endpointId")} AS open
       FROM q WHERE q.endpointId IS NOT NULL AND NOT ${HAS_HEAD})
     UPDATE deliveries SET is_head = 1,
       lease_owner = CASE WHEN ${LEASABLE} THEN :owner ELSE lease_owner END,
       lease_expires_at = CASE WHEN ${LEASABLE} THEN :now + :leaseMs ELSE lease_expires_at END,
       attempt_count = CASE WHEN ${LEASABLE} THEN attempt_count + 1 ELSE attempt_count END
     FROM n WHERE deliveries.rowid = +n.rid
     RETURNING ${CLAIMED_COLUMNS}, lease_owner IS :owner AS leased`;

/**
 * After deliveries re-entered `pending` with is_head = 0 (a replay, of events possibly older
 * than their queue's head): per queue, the lowest of them becomes the head unless the queue's
 * head comes before it; a head that comes after it stops being one.
 *
 * One lease per queue (DESIGN §3 replay, §6): a later row of the queue may be leased right now (the head
 * it displaces, or a row an earlier replay displaced while leased). The new head is then due no
 * earlier than the end of that lease, so no claim or poll takes it while the other is in flight;
 * the displaced row, pending again after its attempt, waits behind it like any later row. Only
 * rows from the queue's head on can be pending, so the walk for leases starts there.
 */
export function* resetHeads(reentered: Iterable<QueuedRow>, now: number): Op<void> {
  const queues = lowestPerQueue(reentered);
  if (queues.length === 0) return;
  const args = { queues: JSON.stringify(queues.map((q) => [q.endpointId, q.aggregate, q.sequence, q.id])) };
  const leases = yield* all<{ id: string; leaseEnd: number }>(
    `SELECT id, leaseEnd FROM (SELECT q.id, (SELECT max(d.lease_expires_at) FROM events e CROSS JOIN deliveries d INDEXED BY deliveries_event
         WHERE e.aggregate = q.aggregate AND e.sequence > q.sequence
           AND e.sequence >= (SELECT h.sequence FROM deliveries h INDEXED BY deliveries_heads
             WHERE h.endpoint_id = q.endpointId AND h.aggregate = q.aggregate AND h.status = 'pending' AND h.is_head = 1)
           AND d.event_id = e.id AND d.endpoint_id = q.endpointId AND d.status = 'pending'
           AND d.lease_owner IS NOT NULL AND d.lease_expires_at > :now) AS leaseEnd
     FROM (SELECT value ->> 0 AS endpointId, value ->> 1 AS aggregate, value ->> 2 AS sequence, value ->> 3 AS id
           FROM json_each(:queues)) AS q)
     WHERE leaseEnd IS NOT NULL`,
    { ...args, now },
  );
  yield* exec(
    `UPDATE deliveries INDEXED BY deliveries_heads SET is_head = 0
     FROM (SELECT value ->> 0 AS endpointId, value ->> 1 AS aggregate, value ->> 2 AS sequence
           FROM json_each(:queues)) AS q
     WHERE deliveries.endpoint_id = q.endpointId AND deliveries.aggregate = q.aggregate
       AND deliveries.status = 'pending' AND deliveries.is_head = 1 AND deliveries.sequence > q.sequence`,
    args,
  );
  yield* exec(
    `UPDATE deliveries SET is_head = 1,
       next_attempt_at = max(next_attempt_at, coalesce((SELECT value ->> 1 FROM json_each(:leases)
                                                         WHERE value ->> 0 = deliveries.id), 0))
     WHERE id IN (
       SELECT q.id FROM (SELECT value ->> 0 AS endpointId, value ->> 1 AS aggregate, value ->> 3 AS id
                         FROM json_each(:queues)) AS q
       WHERE NOT ${HAS_HEAD})`,
    { ...args, leases: JSON.stringify(leases.map((l) => [l.id, l.leaseEnd])) },
  );
}

/** What an UPDATE … RETURNING must return for its queues to be kept (QueuedRow). */
export const RETURNING_QUEUE = "RETURNING id, endpoint_id AS endpointId, aggregate, sequence";

/** Of some rows, the one with the lowest sequence of each queue. */
function lowestPerQueue(rows: Iterable<QueuedRow>): QueuedRow[] {
  const lowest = new Map<string, QueuedRow>();
  for (const row of rows) {
    const key = `${row.endpointId}\u0000${row.aggregate}`;
    const seen = lowest.get(key);
    if (!seen || row.sequence < seen.sequence) lowest.set(key, row);
  }
  return [...lowest.values()];
}
