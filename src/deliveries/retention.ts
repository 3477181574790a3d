// Retention (OUTBOXD_RETENTION): deletes delivered deliveries, their attempts, old minute
// buckets and old commit rows. Invariant kept here: pending and dead deliveries are never
// pruned, nor the attempts of a delivery that is not delivered, so nothing undelivered
// disappears.
import { type Op, run } from "../db/op.ts";
import type { Writer } from "../db/writer.ts";
import { idBefore } from "../lib/ids.ts";
import { type Chunked, inChunks } from "./chunks.ts";
import { minuteOf } from "./counters.ts";

const PRUNE_CHUNK = 5_000;

export type Pruned = { deliveries: number; attempts: number; commits: number };

/** Deletes what retention allows from before `before`, at most `limit` rows of each kind. */
export function* prune(before: number, limit: number): Op<Pruned> {
  // The attempts of deliveries delivered before the cutoff (all of them started before it).
  const attempts = yield* run(
    `DELETE FROM attempts WHERE pos IN (
       SELECT a.pos FROM deliveries d INDEXED BY deliveries_delivered_at
         JOIN attempts a ON a.delivery_id = d.id
       WHERE d.status = 'delivered' AND d.delivered_at < :before LIMIT :limit)`,
    { before, limit },
  );
  const deliveries = yield* run(
    `DELETE FROM deliveries WHERE id IN (
       SELECT id FROM deliveries WHERE status = 'delivered' AND delivered_at < :before
         AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = deliveries.id)
       LIMIT :limit)`,
    { before, limit },
  );
  yield* run("DELETE FROM delivered_minutes WHERE minute < :minute", { minute: minuteOf(before) });
  const commits = yield* run(
    // Commit ids begin with their creation time: the primary key is the time index.
    "DELETE FROM commits WHERE id IN (SELECT id FROM commits WHERE id < :cutoff LIMIT :limit)",
    { cutoff: idBefore("cmt", before), limit },
  );
  return { deliveries, attempts, commits };
}

/** Prunes everything retention allows from before `before`, in chunks; returns the totals. */
export function pruneAll(writer: Writer, before: number, options: Chunked = {}): Promise<Pruned> {
  return inChunks(writer, (limit) => prune(before, limit), { limit: PRUNE_CHUNK, ...options });
}
