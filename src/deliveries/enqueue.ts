// Transition: (nothing) → pending. A commit's fan-out becomes one delivery per target endpoint,
// in one of two ways, both decided in the commit's own transaction (DESIGN §1.1):
//   - inline: the deliveries are inserted by the commit (enqueueDelivery), as long as the commit
//     creates at most INLINE_DELIVERIES of them;
//   - deferred: a larger fan-out is written compactly by the commit, one fan_outs row per event
//     listing each delivery's id and endpoint (deferFanOut), and expandFanOuts turns those rows
//     into deliveries right after, EXPAND_CHUNK at a time, oldest row first, each chunk in its
//     own small transaction between commit groups (src/commit/fan-out-expander.ts runs it).
//     10,000 deliveries in one transaction held the single writer for ~300 ms, and every other
//     commit with it; a chunk holds it for a few milliseconds.
// The delivery ids are chosen by the commit either way, so its answer names every delivery.
// Nothing is lost on a crash: the fan_outs row commits with the events, and a chunk's inserts
// commit with the row's progress (`done`) or its deletion; any process expands what is left.
//
// Invariants kept here:
//   - heads (heads.ts): a new row is its queue's head iff the queue has no pending row yet;
//   - order per aggregate: while an aggregate has a fan_outs row, every later event of that
//     aggregate is deferred too (FAN_OUT_PENDING, read with the aggregate's next sequence), and
//     rows expand in commit order, so no delivery of a later event exists before an earlier
//     event's; the head rule above then holds as if they had been inserted inline;
//   - a delivery whose endpoint was deleted before its row expanded is dead with
//     `endpoint_deleted`, as the delete would have made it (dead-letter.ts).
//
// Own leases: a commit in a process with a dispatcher asks it for a lease per inline
// delivery (HeadLeases). When the new row is its queue's head, due now, and its endpoint is still
// the enabled webhook endpoint the dispatcher knows (same updated_at), the INSERT itself leases it
// (pending → in flight, as a claim would: claim.ts), and the dispatcher is handed the row and its
// event once the commit is durable. So most deliveries are never claimed by a transaction of their
// own, and their events are never read back. A lease the commit rolls back never existed; one the
// dispatcher never takes over is given back (dispatcher.ts PROMISE_MS) or runs out like any other.
import { all, exec, get, type Op, run } from "../db/op.ts";
import { newId } from "../lib/ids.ts";
import { DEAD_LETTER_SET, type DeadReason, deadLetterEndpoint } from "./dead-letter.ts";
import { IS_FIRST_IN_QUEUE, promoteHeads } from "./heads.ts";

/** The most deliveries a commit inserts itself; a larger fan-out is deferred (deferFanOut). */
export const INLINE_DELIVERIES = 1000;
/** The most deliveries one expansion transaction inserts. */
export const EXPAND_CHUNK = 500;

export interface NewDelivery {
  eventId: string;
  endpointId: string;
  aggregate: string;
  sequence: number;
  type: string;
  /** When it becomes due: the later of the commit and deliverAfter. */
  availableAt: number;
  deliverBy: number;
  now: number;
  /** The event's payload and trace context: what a lease taken by the INSERT hands the dispatcher. */
  payload?: string;
  traceparent?: string | null;
}

/** A lease the dispatcher offers for a new delivery to one endpoint (HeadLeases.offer). */
export interface HeadLease {
  /** The lease token (the fence of complete.ts). */
  owner: string;
  leaseMs: number;
  /** The endpoint's updated_at as the dispatcher knows it: any change since, and no lease is taken. */
  endpointVersion: number;
}

/** A new delivery leased by its own INSERT: what its send needs, without reading anything back. */
export interface LeasedHead {
  id: string;
  eventId: string;
  endpointId: string;
  aggregate: string;
  sequence: number;
  previousSequence: number | null;
  type: string;
  payload: string;
  traceparent: string | null;
  availableAt: number;
  deliverBy: number;
  /** When the lease began (the commit's time); it holds until this plus leaseMs. */
  leasedAt: number;
  owner: string;
}

/** The dispatcher of this process, as the commit sees it (see the header: own leases). */
export interface HeadLeases {
  /** A lease for a new delivery to this endpoint, due now; null when the dispatcher has no room or does not know the endpoint. */
  offer(endpointId: string): HeadLease | null;
  /** The INSERT took the lease (it stands once the commit is durable). */
  leased(head: LeasedHead): void;
}

/**
 * previousSequence (DESIGN §19): the queue's latest sequence with a delivery, kept in queue_tails
 * (delivered rows are pruned, that table is not). Read by the INSERT, moved on by TAIL after it.
 */
const PREVIOUS = `(SELECT t.sequence FROM queue_tails t WHERE t.endpoint_id = :endpointId AND t.aggregate = :aggregate)`;
const TAIL = `INSERT INTO queue_tails (endpoint_id, aggregate, sequence) VALUES (:endpointId, :aggregate, :sequence)
  ON CONFLICT (endpoint_id, aggregate) DO UPDATE SET sequence = excluded.sequence`;

const INSERT = `INSERT INTO deliveries (id, event_id, endpoint_id, aggregate, sequence, event_type, status,
    is_head, available_at, next_attempt_at, deliver_by, created_at, previous_sequence)
  VALUES (:id, :eventId, :endpointId, :aggregate, :sequence, :type, 'pending',
    ${IS_FIRST_IN_QUEUE}, :availableAt, :availableAt, :deliverBy, :now, ${PREVIOUS})`;

/**
 * Whether a new delivery would be its queue's head, and whether its endpoint is still the enabled
 * webhook endpoint the dispatcher knows: read first, then the INSERT writes the lease with the row
 * (one INSERT … SELECT … RETURNING did both and cost ~30 µs more per row).
 */
const HEAD_AND_FRESH = `SELECT ${IS_FIRST_IN_QUEUE} AS head, ${PREVIOUS} AS previous, EXISTS (SELECT 1 FROM endpoints e WHERE e.id = :endpointId
    AND e.updated_at = :endpointVersion AND e.disabled = 0 AND e.kind = 'webhook' AND e.rate_limit IS NULL) AS fresh`;

const INSERT_LEASED = `INSERT INTO deliveries (id, event_id, endpoint_id, aggregate, sequence, event_type, status,
    is_head, attempt_count, lease_owner, lease_expires_at, available_at, next_attempt_at, deliver_by, created_at,
    previous_sequence)
  VALUES (:id, :eventId, :endpointId, :aggregate, :sequence, :type, 'pending',
    1, 1, :owner, :now + :leaseMs, :availableAt, :availableAt, :deliverBy, :now, :previous)`;

/** The plain INSERT with the head flag as read (HEAD_AND_FRESH). */
const INSERT_HEAD = `INSERT INTO deliveries (id, event_id, endpoint_id, aggregate, sequence, event_type, status,
    is_head, available_at, next_attempt_at, deliver_by, created_at, previous_sequence)
  VALUES (:id, :eventId, :endpointId, :aggregate, :sequence, :type, 'pending',
    :head, :availableAt, :availableAt, :deliverBy, :now, :previous)`;

/** A new delivery's id (time-ordered, from the commit's time). */
export function newDeliveryId(now: number): string {
  return newId("dlv", now);
}

/**
 * Inserts a pending delivery; returns its id. With `leases`, a delivery due now is leased to the
 * dispatcher by this INSERT when it becomes its queue's head (see the header: own leases).
 */
export function* enqueueDelivery(
  delivery: NewDelivery,
  id = newDeliveryId(delivery.now),
  leases?: HeadLeases,
): Op<string> {
  const lease =
    leases &&
    delivery.payload !== undefined &&
    delivery.availableAt <= delivery.now &&
    delivery.deliverBy > delivery.now
      ? leases.offer(delivery.endpointId)
      : null;
  const tail = {
    endpointId: delivery.endpointId,
    aggregate: delivery.aggregate,
    sequence: delivery.sequence,
  };
  if (!lease) {
    yield* run(INSERT, { id, ...delivery });
    yield* exec(TAIL, tail);
    return id;
  }
  const checked = yield* get<{ head: number; previous: number | null; fresh: number }>(HEAD_AND_FRESH, {
    endpointId: delivery.endpointId,
    aggregate: delivery.aggregate,
    endpointVersion: lease.endpointVersion,
  });
  const previous = checked?.previous ?? null;
  if (checked?.head !== 1 || checked.fresh !== 1) {
    yield* run(INSERT_HEAD, { id, ...delivery, head: checked?.head ?? 0, previous });
    yield* exec(TAIL, tail);
    return id;
  }
  yield* run(INSERT_LEASED, { id, ...delivery, ...lease, previous });
  yield* exec(TAIL, tail);
  leases?.leased({
    id,
    eventId: delivery.eventId,
    endpointId: delivery.endpointId,
    aggregate: delivery.aggregate,
    sequence: delivery.sequence,
    previousSequence: previous,
    type: delivery.type,
    payload: delivery.payload as string,
    traceparent: delivery.traceparent ?? null,
    availableAt: delivery.availableAt,
    deliverBy: delivery.deliverBy,
    leasedAt: delivery.now,
    owner: lease.owner,
  });
  return id;
}

/**
 * SQL for the aggregate's next-sequence read (bound as :key): 1 while the aggregate has a
 * fan-out waiting to be expanded, when the event must be deferred too.
 */
export const FAN_OUT_PENDING = "EXISTS (SELECT 1 FROM fan_outs WHERE aggregate = :key)";

/** One event's fan-out, to be expanded after its commit. */
export interface DeferredFanOut extends Omit<NewDelivery, "endpointId"> {
  targets: { id: string; endpointId: string }[];
}

/** Writes an event's fan-out compactly (one row), in the commit's transaction. */
export function* deferFanOut(fanOut: DeferredFanOut): Op<void> {
  yield* exec(
    `INSERT INTO fan_outs (event_id, aggregate, sequence, event_type, available_at, deliver_by, created_at, targets)
     VALUES (:eventId, :aggregate, :sequence, :type, :availableAt, :deliverBy, :now, :targets)`,
    {
      eventId: fanOut.eventId,
      aggregate: fanOut.aggregate,
      sequence: fanOut.sequence,
      type: fanOut.type,
      availableAt: fanOut.availableAt,
      deliverBy: fanOut.deliverBy,
      now: fanOut.now,
      targets: JSON.stringify(fanOut.targets.map((t) => [t.id, t.endpointId])),
    },
  );
}

/**
 * The deliveries of an event not yet expanded (an event-id retry answers with every delivery
 * its commit named, expanded or not).
 */
export function* unexpandedDeliveries(eventId: string): Op<{ id: string; endpointId: string }[]> {
  return yield* all<{ id: string; endpointId: string }>(
    `SELECT t.value ->> '$[0]' AS id, t.value ->> '$[1]' AS endpointId
     FROM fan_outs f, json_each(f.targets) t WHERE f.event_id = :eventId AND t.key >= f.done`,
    { eventId },
  );
}

interface FanOutRow extends Omit<NewDelivery, "endpointId"> {
  pos: number;
  targets: string;
  done: number;
}

/** What one expansion inserted. */
export interface Expanded {
  deliveries: number;
  endpointIds: Set<string>;
  /** Whether fan-outs are left to expand. */
  more: boolean;
}

/**
 * Expands the oldest deferred fan-outs into at most `max` deliveries (one transaction): from the
 * oldest fan_outs row on, each row's next targets, recording progress or deleting the finished
 * row. `now` is when a delivery to a meanwhile deleted endpoint is dead-lettered.
 */
export function* expandFanOuts(max: number, now: number): Op<Expanded> {
  const expanded: Expanded = { deliveries: 0, endpointIds: new Set(), more: false };
  let after = 0;
  while (expanded.deliveries < max) {
    const row = yield* get<FanOutRow>(
      `SELECT pos, event_id AS eventId, aggregate, sequence, event_type AS type, available_at AS availableAt,
         deliver_by AS deliverBy, created_at AS now, targets, done
       FROM fan_outs WHERE pos > :after ORDER BY pos LIMIT 1`,
      { after },
    );
    if (!row) return expanded;
    after = row.pos;
    const targets = JSON.parse(row.targets) as [id: string, endpointId: string, cancelledAt?: number][];
    const end = Math.min(targets.length, row.done + max - expanded.deliveries);
    const { pos: _pos, targets: _targets, done: _done, ...event } = row;
    const endpoints = new Set<string>();
    for (const [id, endpointId, cancelledAt] of targets.slice(row.done, end)) {
      yield* enqueueDelivery({ ...event, endpointId }, id);
      endpoints.add(endpointId);
      // Cancelled before it was expanded: dead, as cancel.ts would have made it then.
      if (cancelledAt !== undefined) {
        yield* run(`UPDATE deliveries SET ${DEAD_LETTER_SET} WHERE id = :id`, {
          id,
          at: cancelledAt,
          reason: "cancelled" satisfies DeadReason,
        });
        yield* promoteHeads([id]);
      }
    }
    const gone = yield* all<{ id: string }>(
      "SELECT value AS id FROM json_each(:ids) WHERE value NOT IN (SELECT id FROM endpoints)",
      { ids: JSON.stringify([...endpoints]) },
    );
    for (const { id } of gone) {
      yield* deadLetterEndpoint(id, now);
      endpoints.delete(id);
    }
    if (end === targets.length) yield* exec("DELETE FROM fan_outs WHERE pos = :pos", { pos: row.pos });
    else yield* exec("UPDATE fan_outs SET done = :end WHERE pos = :pos", { end, pos: row.pos });
    expanded.deliveries += end - row.done;
    for (const id of endpoints) expanded.endpointIds.add(id);
  }
  // Finished rows are gone: any row left is more to do.
  expanded.more = yield* fanOutsPending();
  return expanded;
}

/** Whether any deferred fan-out waits to be expanded (after a crash, or another process's). */
export function* fanOutsPending(): Op<boolean> {
  return (yield* get("SELECT 1 FROM fan_outs LIMIT 1")) !== undefined;
}
