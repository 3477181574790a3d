// Transition: pending → dead (`deadline_exceeded`), by the sweep: rows whose deadline passed
// while no live lease held them. A leased row is left to its sender, whose completion decides
// (complete.ts), or to the next sweep once the lease has run out.
// Invariants kept here: the queues of expired rows promote their next heads (heads.ts), and the
// deadline counter grows by exactly the rows expired (counters.ts), in the same transaction.
import { all, type Op } from "../db/op.ts";
import { defineWrite, type Writes } from "../db/writer-ops.ts";
import { type Chunked, inChunks } from "./chunks.ts";
import { bumpDeadlineCounter } from "./counters.ts";
import { DEAD_LETTER_SET, type DeadReason } from "./dead-letter.ts";
import { promoteHeads } from "./heads.ts";

const EXPIRE_CHUNK = 1_000;

/** Expires up to `limit` rows; returns how many. */
export function* expireDeadlines(now: number, limit = EXPIRE_CHUNK): Op<number> {
  const rows = yield* all<{ id: string }>(
    `UPDATE deliveries SET ${DEAD_LETTER_SET}
     WHERE id IN (
       SELECT d.id FROM endpoints e CROSS JOIN deliveries d INDEXED BY deliveries_deadline
       WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.deliver_by <= :at
         AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= :at)
       LIMIT :limit)
     RETURNING id`,
    { at: now, reason: "deadline_exceeded" satisfies DeadReason, limit },
  );
  yield* promoteHeads(rows.map((row) => row.id));
  if (rows.length > 0) yield* bumpDeadlineCounter(rows.length);
  return rows.length;
}

const expireChunkWrite = defineWrite(
  "deliveries.expireChunk",
  function* (now: number, limit: number): Op<{ expired: number }> {
    return { expired: yield* expireDeadlines(now, limit) };
  },
  { again: false },
);

/**
 * Expires every row past its deadline, in chunks: a backlog past its deadline (after an outage,
 * say) is dead-lettered in one sweep, never holding the writer long at a time.
 */
export async function expireAllDeadlines(
  writes: Pick<Writes, "write">,
  now: number,
  options: Chunked = {},
): Promise<number> {
  const { expired } = await inChunks(writes, (limit) => expireChunkWrite(now, limit), {
    limit: EXPIRE_CHUNK,
    ...options,
  });
  return expired;
}
