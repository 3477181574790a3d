// Transitions out of in flight, after an attempt: → delivered (2xx), → pending again (retry, or
// 410 Gone, which disables the endpoint), → dead (failed at or after the deadline).
// Invariants kept here:
//   - fenced: a row changes only while the caller still holds the lease of the claim that sent
//     it (lease_owner), so a dispatcher whose lease was taken over cannot overwrite a newer
//     result; its attempt is still logged;
//   - a row that leaves pending promotes its queue's next head (heads.ts);
//   - every delivered row is counted in its minute bucket, every deadline death in the
//     counter (counters.ts), in the same transaction.
import { exec, type Op, run } from "../db/op.ts";
import { bumpDeadlineCounter, recordDelivered } from "./counters.ts";
import { DEAD_LETTER_SET } from "./dead-letter.ts";
import { promoteHeads } from "./heads.ts";

export interface AttemptRecord {
  deliveryId: string;
  owner: string;
  endpointId: string;
  /** The delivery's aggregate: with endpointId, its queue, whose next head a completion promotes. */
  aggregate: string;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responsePrefix: string | null;
}

export type Completion =
  /** latencyMs: from the moment it became due (commit, deliverAfter or replay) to the 2xx. */
  | { kind: "delivered"; at: number; latencyMs: number }
  | { kind: "retry"; at: number; nextAttemptAt: number }
  | { kind: "dead"; at: number; reason: "deadline_exceeded" }
  /** 410 Gone: the endpoint is disabled; the delivery waits for re-enable or its deadline. */
  | { kind: "gone"; at: number };

/** Endpoint health is written at most once a second per endpoint and outcome (a hot row). */
const HEALTH_RESOLUTION_MS = 1_000;

const RESULT = "last_status_code = :code, last_error = :error";
const RELEASE = `lease_owner = NULL, lease_expires_at = NULL, ${RESULT}`;
const FENCE = "WHERE id = :id AND lease_owner = :owner AND status = 'pending'";

/**
 * Records an attempt and its outcome. Returns false when the fence refused it (the attempt is
 * still logged).
 */
export function* completeDelivery(attempt: AttemptRecord, completion: Completion): Op<boolean> {
  yield* logAttempt(attempt);
  const changed = yield* applyCompletion(attempt, completion);
  if (!changed) return false;
  if (completion.kind === "delivered" || completion.kind === "dead") {
    // It left pending: the next of its queue becomes the head.
    yield* promoteHeads([{ endpointId: attempt.endpointId, aggregate: attempt.aggregate }]);
  }
  yield* touchEndpointHealth(attempt.endpointId, completion);
  return true;
}

function* logAttempt(attempt: AttemptRecord): Op<void> {
  yield* run(
    `INSERT INTO attempts (delivery_id, started_at, duration_ms, status_code, error, response_prefix)
     VALUES (:deliveryId, :startedAt, :durationMs, :statusCode, :error, :responsePrefix)`,
    {
      deliveryId: attempt.deliveryId,
      startedAt: attempt.startedAt,
      durationMs: attempt.durationMs,
      statusCode: attempt.statusCode,
      error: attempt.error,
      responsePrefix: attempt.responsePrefix,
    },
  );
}

/** The fenced UPDATE of the delivery and what it counts; whether the fence let it through. */
function* applyCompletion(attempt: AttemptRecord, completion: Completion): Op<boolean> {
  const fence = {
    id: attempt.deliveryId,
    owner: attempt.owner,
    code: attempt.statusCode,
    error: attempt.error,
  };
  switch (completion.kind) {
    case "delivered": {
      const changed = yield* run(
        `UPDATE deliveries SET status = 'delivered', delivered_at = :at, ${RELEASE} ${FENCE}`,
        { ...fence, at: completion.at },
      );
      if (changed > 0) yield* recordDelivered(attempt.endpointId, completion.at, completion.latencyMs);
      return changed > 0;
    }
    case "retry":
      return (
        (yield* run(`UPDATE deliveries SET next_attempt_at = :next, ${RELEASE} ${FENCE}`, {
          ...fence,
          next: completion.nextAttemptAt,
        })) > 0
      );
    case "gone": {
      const changed = yield* run(`UPDATE deliveries SET next_attempt_at = :at, ${RELEASE} ${FENCE}`, {
        ...fence,
        at: completion.at,
      });
      if (changed > 0) yield* disableGoneEndpoint(attempt.endpointId, completion.at);
      return changed > 0;
    }
    case "dead": {
      const changed = yield* run(`UPDATE deliveries SET ${DEAD_LETTER_SET}, ${RESULT} ${FENCE}`, {
        ...fence,
        at: completion.at,
        reason: completion.reason,
      });
      if (changed > 0) yield* bumpDeadlineCounter(changed);
      return changed > 0;
    }
  }
}

function* disableGoneEndpoint(endpointId: string, at: number): Op<void> {
  yield* run(
    "UPDATE endpoints SET disabled = 1, disabled_reason = :reason, updated_at = :at WHERE id = :endpointId",
    { endpointId, reason: `the receiver answered 410 Gone at ${new Date(at).toISOString()}`, at },
  );
}

function* touchEndpointHealth(endpointId: string, completion: Completion): Op<void> {
  // To the second: at thousands of deliveries a second, writing this one hot row every time
  // would cost more than it tells.
  const column = completion.kind === "delivered" ? "last_success_at" : "last_failure_at";
  yield* exec(
    `UPDATE endpoints SET ${column} = :at
     WHERE id = :endpointId AND (${column} IS NULL OR ${column} <= :at - :resolution)`,
    { endpointId, at: completion.at, resolution: HEALTH_RESOLUTION_MS },
  );
}
