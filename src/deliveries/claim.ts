// Transition: pending → in flight (a pending row with a live lease; docs/delivery-lifecycle.md).
// "In flight" is not a status, so a crash can never strand a row: its lease simply runs out and
// the row is claimable again. Invariant used here: only queue heads are claimed (heads.ts).
import { all, get, type Op } from "../db/op.ts";
import { webhookEndpoint } from "./endpoint-kind.ts";
import type { Delivery } from "./read.ts";
import { chunks, rowsStatement } from "./rows.ts";

/** What a claim returns of each row (the RETURNING list below, under the schema's names). */
export type ClaimedDelivery = Pick<
  Delivery,
  | "id"
  | "eventId"
  | "endpointId"
  | "aggregate"
  | "sequence"
  | "previousSequence"
  | "attemptCount"
  | "availableAt"
  | "deliverBy"
> & {
  /**
   * The row's rowid, when the claim returned it: its completion finds the row by it, without a
   * lookup of the id index (complete.ts; the id is checked too). Absent for a head a commit leased.
   */
  rid?: number;
};

export interface ClaimRequest {
  /** The lease token of this claim: only its holder may complete these rows (complete.ts). */
  owner: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** How many more sends each endpoint may start now; endpoints not listed get `endpointLimit`. */
  endpointRoom: Record<string, number>;
  endpointLimit: number;
}

/**
 * What a claim could take now (row alias `d`, binds :now), and the one definition of `due`
 * (DESIGN §3 stats): pending, the head of its (endpoint, aggregate) queue, due, not leased (or
 * its lease ran out), before its deadline, at an endpoint that exists and is enabled. Spelled
 * with `status = 'pending' AND is_head = 1` literally so the planner can use the partial index
 * deliveries_endpoint_ready.
 */
export const CLAIMABLE_NOW = claimableNow("d");

function claimableNow(row: string): string {
  return `${claimableRow(row)}
  AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = ${row}.endpoint_id AND e.disabled = 0)`;
}

/** CLAIMABLE_NOW without its endpoint's condition: for a query that walks an endpoint it checked. */
function claimableRow(row: string): string {
  return `${row}.status = 'pending' AND ${row}.is_head = 1 AND ${leasableRow(row)}`;
}

/**
 * The row's own part of CLAIMABLE_NOW beyond being a pending head: due, not leased (or its lease
 * ran out), before its deadline. Also what a promotion checks of the head it makes, which is
 * pending and becomes the head in the same statement (heads.ts promoteQueues with a lease).
 */
export function leasableRow(row: string): string {
  return `${row}.next_attempt_at <= :now
  AND (${row}.lease_expires_at IS NULL OR ${row}.lease_expires_at <= :now)
  AND ${row}.deliver_by > :now`;
}

/**
 * Whether the endpoint `endpointId` (an SQL expression) is one the dispatcher's claims take from:
 * it exists, is enabled and is a webhook endpoint (CLAIMABLE_NOW's endpoint condition).
 */
export function dispatchableEndpoint(endpointId: string): string {
  return `EXISTS (SELECT 1 FROM endpoints e WHERE e.id = ${endpointId} AND e.disabled = 0 AND ${webhookEndpoint("e")})`;
}

/**
 * CLAIMABLE_NOW at a webhook endpoint (endpoint-kind.ts): the endpoint row is looked up once per
 * delivery, not twice (the dispatcher's claim by id).
 */
const CLAIMABLE_NOW_TO_WEBHOOK = `${claimableRow("d")}
  AND ${dispatchableEndpoint("d.endpoint_id")}`;

/** What a claim returns of each row it leased (ClaimedDelivery), after RETURNING. */
export const CLAIMED_COLUMNS = `rowid AS rid, id, event_id AS eventId, endpoint_id AS endpointId, aggregate, sequence,
  previous_sequence AS previousSequence, attempt_count AS attemptCount, available_at AS availableAt, deliver_by AS deliverBy`;

const RETURNING_CLAIMED = `RETURNING ${CLAIMED_COLUMNS}`;

const LEASE_SET =
  "lease_owner = :owner, lease_expires_at = :now + :leaseMs, attempt_count = attempt_count + 1";

/** How many deliveries a claim could take now, per endpoint (stats' `due`). */
export function* claimableByEndpoint(now: number): Op<{ endpointId: string; n: number }[]> {
  return yield* all(
    `SELECT d.endpoint_id AS endpointId, count(*) AS n FROM deliveries d INDEXED BY deliveries_endpoint_ready
     WHERE ${CLAIMABLE_NOW} GROUP BY d.endpoint_id`,
    { now },
  );
}

/**
 * Claims, in one statement, up to `limit` deliveries that are due, not leased (or whose lease
 * expired), before their deadline, at an enabled endpoint, and the head of their
 * (endpoint, aggregate) queue: no pending delivery of a lower sequence exists there, whether
 * due or scheduled later. Per endpoint, at most its remaining room is taken.
 */
export function* claimDeliveries(request: ClaimRequest): Op<ClaimedDelivery[]> {
  return yield* all<ClaimedDelivery>(
    `WITH heads AS (
       -- Endpoint by endpoint (enabled webhook endpoints: the outer loop checks each once, not
       -- each row), at most :perEndpoint of each one's due heads, oldest first, through its own
       -- index range: the due backlog of an endpoint that takes nothing now (no room left, or a
       -- pull endpoint nobody polls) is never walked, so it cannot slow the others' claims.
       -- (CROSS JOIN: SQLite keeps the endpoints as the outer loop. Rows by rowid: no lookup of
       -- the id index.)
       SELECT d.rowid AS rid, d.endpoint_id, d.next_attempt_at
       FROM endpoints o CROSS JOIN deliveries d
       WHERE o.disabled = 0 AND ${webhookEndpoint("o")}
         AND coalesce(json_extract(:room, '$."' || o.id || '"'), :endpointLimit) > 0
         AND d.rowid IN (
           SELECT h.rowid FROM deliveries h INDEXED BY deliveries_endpoint_ready
           WHERE h.endpoint_id = o.id AND ${claimableRow("h")}
           ORDER BY h.next_attempt_at
           LIMIT :perEndpoint)
     ), ranked AS (
       SELECT rid, endpoint_id, next_attempt_at,
         row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at) AS rank
       FROM heads
     )
     UPDATE deliveries
     SET ${LEASE_SET}
     WHERE rowid IN (
       SELECT rid FROM ranked
       WHERE rank <= coalesce(json_extract(:room, '$."' || endpoint_id || '"'), :endpointLimit)
       ORDER BY next_attempt_at LIMIT :limit)
     ${RETURNING_CLAIMED}`,
    {
      owner: request.owner,
      now: request.now,
      leaseMs: request.leaseMs,
      limit: request.limit,
      perEndpoint: Math.min(
        request.limit,
        Math.max(request.endpointLimit, ...Object.values(request.endpointRoom)),
      ),
      room: JSON.stringify(request.endpointRoom),
      endpointLimit: request.endpointLimit,
    },
  );
}

export interface ClaimByIdRequest {
  owner: string;
  now: number;
  leaseMs: number;
  /** Deliveries that may have become claimable heads (the dispatcher's hints); at most a few hundred. */
  ids: string[];
}

/**
 * Claims those of `ids` that the scanning claim could take now (the same CLAIMABLE_NOW, so the
 * same guarantees: heads only, due, not leased, before the deadline, enabled webhook endpoint),
 * by primary key, without scanning the ready index. The dispatcher knows such ids from its own
 * process: the deliveries its commits created and the heads its completions promoted. An id that
 * is not claimable (not the head yet, leased by another dispatcher, not due) is simply not
 * taken; the scanning claim finds it when it is.
 */
export function* claimDeliveriesById(request: ClaimByIdRequest): Op<ClaimedDelivery[]> {
  if (request.ids.length === 0) return [];
  const { owner, now, leaseMs, ids } = request;
  return yield* all<ClaimedDelivery>(
    `UPDATE deliveries AS d SET ${LEASE_SET}
     WHERE d.id IN (SELECT value FROM json_each(:keys)) AND ${CLAIMABLE_NOW_TO_WEBHOOK}
     ${RETURNING_CLAIMED}`,
    { owner, now, leaseMs, keys: JSON.stringify(ids) },
  );
}

/**
 * Gives leases back unattempted: rows leased to a dispatcher that never got to send them (a lease
 * taken by a commit's INSERT that the commit never handed over: enqueue.ts; a head a promotion
 * leased beyond the room its dispatcher has: dispatch/writes.ts completeAndClaim). Fenced like a
 * completion: a row changes only while it is pending and still holds this lease.
 */
export function* releaseLeases(leases: { id: string; owner: string }[]): Op<void> {
  for (const list of chunks(leases.map((l) => [l.id, l.owner])))
    yield rowsStatement("r", ["id", "owner"], list, RELEASE, {}, { kind: "run", blind: true });
}

const RELEASE = `UPDATE deliveries SET lease_owner = NULL, lease_expires_at = NULL, attempt_count = attempt_count - 1
  FROM r WHERE deliveries.id = +r.id AND deliveries.lease_owner = r.owner AND deliveries.status = 'pending'`;

/**
 * How many heads of one endpoint a claim could take now, counting at most `cap` (the bucket's
 * claim reads it before it writes: rate-limit.ts).
 */
export function* countClaimableHeads(endpointId: string, now: number, cap: number): Op<number> {
  const row = yield* get<{ n: number }>(
    `SELECT count(*) AS n FROM (SELECT 1 FROM deliveries h INDEXED BY deliveries_endpoint_ready
       WHERE h.endpoint_id = :endpointId AND ${claimableRow("h")} LIMIT :cap)`,
    { endpointId, now, cap },
  );
  return row?.n ?? 0;
}

/**
 * Claims up to `limit` claimable heads of one enabled, rate-limited webhook endpoint, oldest due
 * first (DESIGN §19: as many as its bucket allows; src/dispatch/rate-limit.ts). One returning
 * write, so it may end an operation on the remote write path.
 */
export function* claimLimitedHeads(request: {
  owner: string;
  now: number;
  leaseMs: number;
  endpointId: string;
  limit: number;
}): Op<ClaimedDelivery[]> {
  const { owner, now, leaseMs, endpointId, limit } = request;
  if (limit <= 0) return [];
  return yield* all<ClaimedDelivery>(
    `UPDATE deliveries SET ${LEASE_SET}
     WHERE rowid IN (
       SELECT h.rowid FROM deliveries h INDEXED BY deliveries_endpoint_ready
       WHERE h.endpoint_id = :endpointId AND ${claimableRow("h")}
         AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = :endpointId AND e.disabled = 0 AND e.kind = 'webhook')
       ORDER BY h.next_attempt_at LIMIT :limit)
     ${RETURNING_CLAIMED}`,
    { owner, now, leaseMs, endpointId, limit },
  );
}
