// Transition: pending (not leased) → dead with reason `cancelled`, by an operator (DESIGN Part
// II §2/§3 change): the way out for a delivery nobody wants sent any more (a far-off
// deliverAfter that holds its aggregate back, a change that was withdrawn). It stays visible
// and replayable like every dead delivery (replay.ts). A leased row is being sent right now:
// its sender's completion decides, so it is refused until the lease runs out.
// Invariant kept here: when the cancelled row was its queue's head, the queue's next pending
// row becomes the head (heads.ts promoteHeads), in the same transaction. A delivery a commit
// named whose deferred fan-out is not expanded yet is cancelled in its fan-out row, and the
// expansion writes it dead (enqueue.ts).
import { all, get, type Op } from "../db/op.ts";
import { DEAD_LETTER_SET, type DeadReason } from "./dead-letter.ts";
import { promoteHeads } from "./heads.ts";
import { cancelUnexpanded, unexpandedDelivery } from "./unexpanded.ts";

export type CancelOutcome =
  | { kind: "cancelled" }
  | { kind: "not_found" }
  | { kind: "not_pending"; status: string }
  | { kind: "leased"; leaseExpiresAt: number };

export function* cancelDelivery(id: string, now: number): Op<CancelOutcome> {
  const row = yield* get<{ status: string; leaseExpiresAt: number | null }>(
    "SELECT status, lease_expires_at AS leaseExpiresAt FROM deliveries WHERE id = :id",
    { id },
  );
  if (!row) {
    // Named by a commit whose fan-out is not expanded yet: cancelled there (enqueue.ts).
    const waiting = yield* unexpandedDelivery(id);
    if (!waiting) return { kind: "not_found" };
    if (waiting.status !== "pending") return { kind: "not_pending", status: waiting.status };
    yield* cancelUnexpanded(waiting, now);
    return { kind: "cancelled" };
  }
  if (row.status !== "pending") return { kind: "not_pending", status: row.status };
  if (row.leaseExpiresAt !== null && row.leaseExpiresAt > now) {
    return { kind: "leased", leaseExpiresAt: row.leaseExpiresAt };
  }
  const rows = yield* all<{ id: string }>(
    `UPDATE deliveries SET ${DEAD_LETTER_SET}
     WHERE id = :id AND status = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at <= :at)
     RETURNING id`,
    { id, at: now, reason: "cancelled" satisfies DeadReason },
  );
  yield* promoteHeads(rows.map((row) => row.id));
  return { kind: "cancelled" };
}
