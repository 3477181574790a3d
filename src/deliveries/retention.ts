// Retention (OUTBOXD_RETENTION): deletes delivered deliveries, their attempts, old minute
// buckets and expired idempotency responses; never the ledger (commit rows, record versions,
// events: DESIGN §13). Invariants kept here:
//   - pending and dead deliveries are never pruned, nor the attempts of a delivery that is not
//     delivered, so nothing undelivered disappears;
//   - an idempotency response younger than its window (IDEMPOTENCY_TTL_MS, 24 h) is kept even
//     when OUTBOXD_RETENTION is shorter: a client retrying within the window must get the stored
//     answer, not a second commit. Retention shorter than a day still prunes
//     deliveries on time.
import { type Op, run } from "../db/op.ts";
import { defineWrite, type Writes } from "../db/writer-ops.ts";
import { IDEMPOTENCY_TTL_MS } from "../lib/idempotency.ts";
import { idBefore } from "../lib/ids.ts";
import { type Chunked, inChunks } from "./chunks.ts";
import { minuteOf } from "./counters.ts";
import { POINTED_SUCCESS } from "./read.ts";

const PRUNE_CHUNK = 5_000;

export type Pruned = { deliveries: number; attempts: number; idempotencyKeys: number };

export interface Cutoff {
  /** Now minus the retention: delivered rows and idempotency responses older than this may go. */
  before: number;
  /** Now: idempotency responses younger than their window stay. */
  now: number;
}

/** Deletes what retention allows, at most `limit` rows of each kind. */
export function* prune({ before, now }: Cutoff, limit: number): Op<Pruned> {
  // The attempts of deliveries delivered before the cutoff (all of them started before it): those
  // of attempts_delivery, and the success a row points at (schema.ts attempts.on_delivery).
  const attempts = yield* run(
    `DELETE FROM attempts WHERE pos IN (
       SELECT a.pos FROM deliveries d INDEXED BY deliveries_delivered_at
         JOIN attempts a ON a.delivery_id = d.id AND a.on_delivery IS NULL
       WHERE d.status = 'delivered' AND d.delivered_at < :before LIMIT :limit)
     OR pos IN (
       SELECT d.delivered_attempt FROM deliveries d INDEXED BY deliveries_delivered_at
       WHERE d.status = 'delivered' AND d.delivered_at < :before
         AND EXISTS (SELECT 1 FROM attempts a WHERE ${POINTED_SUCCESS("a", "d")})
       LIMIT :limit)`,
    { before, limit },
  );
  const deliveries = yield* run(
    `DELETE FROM deliveries WHERE id IN (
       SELECT id FROM deliveries WHERE status = 'delivered' AND delivered_at < :before
         AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = deliveries.id AND a.on_delivery IS NULL)
         AND NOT EXISTS (SELECT 1 FROM attempts a WHERE ${POINTED_SUCCESS("a", "deliveries")})
       LIMIT :limit)`,
    { before, limit },
  );
  yield* run("DELETE FROM delivered_minutes WHERE minute < :minute", { minute: minuteOf(before) });
  const idempotencyKeys = yield* run(
    // Keyed by commit id, which begins with its creation time: the primary key is the time index.
    `DELETE FROM idempotency_keys WHERE commit_id IN (
       SELECT commit_id FROM idempotency_keys WHERE commit_id < :cutoff AND created_at <= :keysBefore
       LIMIT :limit)`,
    { cutoff: idBefore("cmt", before), keysBefore: now - IDEMPOTENCY_TTL_MS, limit },
  );
  return { deliveries, attempts, idempotencyKeys };
}

const pruneWrite = defineWrite("deliveries.prune", prune, { again: false });

/** Prunes everything retention allows, in chunks; returns the totals. */
export function pruneAll(
  writes: Pick<Writes, "write">,
  cutoff: Cutoff,
  options: Chunked = {},
): Promise<Pruned> {
  return inChunks(writes, (limit) => pruneWrite(cutoff, limit), { limit: PRUNE_CHUNK, ...options });
}
