// Transition: dead → pending, by an operator (HTTP or CLI). The only way out of `dead`:
// attempts reset, due now, with a new deadline (deadline.ts computes it). A delivery whose
// endpoint was deleted stays dead: there is nowhere to send it; so does one whose event's
// payload was erased (ledger/erase.ts): it would send null.
// Invariant kept here: a replayed event may be older than its queue's current head, so the
// heads of every touched queue are recomputed (heads.ts resetHeads), in the same transaction.
import { all, get, type Op } from "../db/op.ts";
import { defineWrite, type Writes } from "../db/writer-ops.ts";
import { type Chunked, inChunks } from "./chunks.ts";
import { type QueuedRow, RETURNING_QUEUE, resetHeads } from "./heads.ts";
import { unexpandedDelivery } from "./unexpanded.ts";

// is_head = 0: resetHeads decides which of them, if any, heads its queue.
const REPLAY_SET = `status = 'pending', is_head = 0, attempt_count = 0, next_attempt_at = :now, available_at = :now,
  deliver_by = :deliverBy, dead_reason = NULL, dead_at = NULL, lease_owner = NULL, lease_expires_at = NULL`;

const REPLAY_CHUNK = 500;

export type ReplayOutcome =
  | "replayed"
  | "not_found"
  | "not_dead"
  | "endpoint_deleted"
  | "event_erased"
  /** Named by a commit whose deferred fan-out is not expanded yet (cancelled there): no row to replay yet. */
  | "not_expanded";

/** Whether the payload of the event of delivery `d` was erased. */
const ERASED = "EXISTS (SELECT 1 FROM events ev WHERE ev.id = d.event_id AND ev.erased_at IS NOT NULL)";

export function* replayDelivery(id: string, now: number, deliverBy: number): Op<ReplayOutcome> {
  const row = yield* get<{ status: string; endpointExists: number; erased: number }>(
    `SELECT status, EXISTS (SELECT 1 FROM endpoints e WHERE e.id = d.endpoint_id) AS endpointExists,
       ${ERASED} AS erased
     FROM deliveries d WHERE id = :id`,
    { id },
  );
  if (!row) return (yield* unexpandedDelivery(id)) ? "not_expanded" : "not_found";
  if (row.status !== "dead") return "not_dead";
  if (!row.endpointExists) return "endpoint_deleted";
  if (row.erased) return "event_erased";
  const rows = yield* all<QueuedRow>(
    `UPDATE deliveries SET ${REPLAY_SET} WHERE id = :id AND status = 'dead' ${RETURNING_QUEUE}`,
    { id, now, deliverBy },
  );
  yield* resetHeads(rows, now);
  return "replayed";
}

export interface ReplayFilter {
  endpoint?: string | undefined;
  reason?: string | undefined;
  /** Only deliveries that went dead at or after this time (ms). */
  since?: number | undefined;
}

// Dead, matching the filter, dead before this replay began (so one that dies again during a
// long replay is not taken twice), whose endpoint still exists and whose event is not erased.
const REPLAYABLE = `d.status = 'dead' AND (:endpoint IS NULL OR d.endpoint_id = :endpoint)
  AND (:reason IS NULL OR d.dead_reason = :reason) AND (:since IS NULL OR d.dead_at >= :since)
  AND d.dead_at < :now
  AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = d.endpoint_id) AND NOT ${ERASED}`;

function replayArgs(filter: ReplayFilter, now: number) {
  return {
    endpoint: filter.endpoint ?? null,
    reason: filter.reason ?? null,
    since: filter.since ?? null,
    now,
  };
}

/** Replays up to `limit` dead deliveries matching the filter; returns how many. */
export function* replayDead(filter: ReplayFilter, now: number, deliverBy: number, limit: number): Op<number> {
  const rows = yield* all<QueuedRow>(
    `UPDATE deliveries SET ${REPLAY_SET}
     WHERE id IN (SELECT d.id FROM deliveries d WHERE ${REPLAYABLE} LIMIT :limit)
     ${RETURNING_QUEUE}`,
    { ...replayArgs(filter, now), deliverBy, limit },
  );
  yield* resetHeads(rows, now);
  return rows.length;
}

const replayChunkWrite = defineWrite(
  "deliveries.replayChunk",
  function* (filter: ReplayFilter, now: number, deliverBy: number, limit: number): Op<{ replayed: number }> {
    return { replayed: yield* replayDead(filter, now, deliverBy, limit) };
  },
  { again: false },
);

/** How many dead deliveries a replay with this filter would take (for progress). */
export function* countReplayable(filter: ReplayFilter, now: number): Op<number> {
  const row = yield* get<{ n: number }>(
    `SELECT count(*) AS n FROM deliveries d WHERE ${REPLAYABLE}`,
    replayArgs(filter, now),
  );
  return row?.n ?? 0;
}

/**
 * Replays every dead delivery matching the filter, in chunks, so a huge replay never holds the
 * writer long (HTTP and CLI both). Returns how many.
 */
export async function replayAllDead(
  writes: Pick<Writes, "write">,
  request: { filter: ReplayFilter; now: number; deliverBy: number },
  options: Chunked = {},
): Promise<number> {
  const { filter, now, deliverBy } = request;
  const { replayed } = await inChunks(writes, (limit) => replayChunkWrite(filter, now, deliverBy, limit), {
    limit: REPLAY_CHUNK,
    ...options,
  });
  return replayed;
}

/** The dead deliveries `recover` takes (DESIGN §19): an endpoint's deadline_exceeded ones by event time. */
export interface RecoverRange {
  endpointId: string;
  /** The events' occurredAt, both ends included (ms). */
  since: number;
  until: number;
}

// Dead by deadline before this recovery began, of events committed in the range.
const RECOVERABLE = `d.endpoint_id = :endpointId AND d.status = 'dead' AND d.dead_reason = 'deadline_exceeded'
  AND d.dead_at < :now AND e.id = d.event_id AND e.occurred_at BETWEEN :since AND :until`;

/**
 * Replays up to `limit` of the range's deliveries, oldest (aggregate, sequence) first, so that an
 * aggregate whose deliveries span two chunks gets its earlier ones first; erased events are left.
 */
export function* recoverDead(range: RecoverRange, now: number, deliverBy: number, limit: number): Op<number> {
  const rows = yield* all<QueuedRow>(
    `UPDATE deliveries SET ${REPLAY_SET}
     WHERE id IN (SELECT d.id FROM deliveries d INDEXED BY deliveries_dead_endpoint, events e
                  WHERE ${RECOVERABLE} AND e.erased_at IS NULL ORDER BY d.aggregate, d.sequence LIMIT :limit)
     ${RETURNING_QUEUE}`,
    { ...range, now, deliverBy, limit },
  );
  yield* resetHeads(rows, now);
  return rows.length;
}

/** How many of the range's deliveries `recover` skips: their events were erased (DESIGN §13). */
export function* countUnrecoverable(range: RecoverRange, now: number): Op<number> {
  const row = yield* get<{ n: number }>(
    `SELECT count(*) AS n FROM deliveries d INDEXED BY deliveries_dead_endpoint, events e
     WHERE ${RECOVERABLE} AND e.erased_at IS NOT NULL`,
    { ...range, now },
  );
  return row?.n ?? 0;
}
