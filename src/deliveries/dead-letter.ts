// Transition: pending → dead. Every way into `dead` (a failed last attempt, a passed deadline,
// a deleted endpoint) sets the same columns through DEAD_LETTER_SET, so a dead row always has
// its reason and time and never keeps a lease. `dead` rows are never pruned (retention.ts);
// replay.ts is the only way out.
import { type Op, run } from "../db/op.ts";

/** Why a delivery is dead (`dead_reason`). */
export type DeadReason = "deadline_exceeded" | "endpoint_deleted" | "cancelled";

/** The one SET clause of every dead-letter; binds :at and :reason. */
export const DEAD_LETTER_SET =
  "status = 'dead', dead_at = :at, dead_reason = :reason, lease_owner = NULL, lease_expires_at = NULL";

/**
 * An endpoint is being deleted: every pending delivery to it becomes dead with
 * `endpoint_deleted` (visible, never silently dropped, but unsendable). No queue of the
 * endpoint keeps a pending row, so there is no head to promote (heads.ts).
 */
export function* deadLetterEndpoint(endpointId: string, at: number): Op<number> {
  return yield* run(
    `UPDATE deliveries SET ${DEAD_LETTER_SET} WHERE endpoint_id = :endpointId AND status = 'pending'`,
    {
      endpointId,
      at,
      reason: "endpoint_deleted" satisfies DeadReason,
    },
  );
}

/**
 * Start-up repair: pending deliveries whose endpoint no longer exists (an older version left them
 * when a delete shared a group commit with commits to the endpoint) become dead with
 * `endpoint_deleted`, as the delete would have made them. Left pending, they would never be
 * claimed, would count as due, and would die at their deadline for the wrong reason.
 */
export function* deadLetterOrphans(at: number): Op<number> {
  return yield* run(
    `UPDATE deliveries SET ${DEAD_LETTER_SET}
     WHERE status = 'pending' AND NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.id = deliveries.endpoint_id)`,
    { at, reason: "endpoint_deleted" satisfies DeadReason },
  );
}
