// What an attempt's outcome makes of a delivery (DESIGN §4 receiver answers, Standard Webhooks'
// status rules): a pure function of the claimed row, the outcome, the time and the retry policy,
// so every rule is tested without HTTP (test/dispatch/decide.test.ts).
import type { ClaimedDelivery } from "../deliveries/claim.ts";
import type { Completion } from "../deliveries/complete.ts";
import { type RetryPolicy, retryAfterCap, retryAfterMs, retryDelay } from "./retry-policy.ts";
import type { SendOutcome } from "./sender.ts";

/** How long before its deadline the last attempt of a failing delivery is due. */
export const LAST_ATTEMPT_MARGIN_MS = 1_000;

export function decide(
  delivery: Pick<ClaimedDelivery, "attemptCount" | "availableAt" | "deliverBy">,
  outcome: Pick<SendOutcome, "statusCode" | "retryAfter">,
  now: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): Completion {
  const status = outcome.statusCode;
  if (status !== null && status >= 200 && status < 300) {
    return { kind: "delivered", at: now, latencyMs: now - delivery.availableAt };
  }
  if (status === 410) return { kind: "gone", at: now };
  let delay = retryDelay(delivery.attemptCount, policy, random);
  if (status === 429 || status === 503) {
    // Wait at least what the receiver asks (up to the cap), but never less than the backoff:
    // `Retry-After: 0` from a receiver that keeps failing must not turn into a hot retry loop.
    const asked = retryAfterMs(outcome.retryAfter, now);
    if (asked !== null) delay = Math.max(delay, Math.min(asked, retryAfterCap(policy)));
  }
  return retryAfter(delivery, now, delay);
}

/**
 * A failed attempt (a webhook's, or a pull consumer's nack or lost lease) retried `delay` ms from
 * now; never past the deadline.
 */
export function retryAfter(
  delivery: Pick<ClaimedDelivery, "deliverBy">,
  now: number,
  delay: number,
): Completion {
  if (now >= delivery.deliverBy) return { kind: "dead", at: now, reason: "deadline_exceeded" };
  let nextAttemptAt = now + delay;
  if (nextAttemptAt >= delivery.deliverBy) {
    // One last attempt shortly before the deadline rather than none at all. It needs a margin:
    // a retry due 1 ms before the deadline was claimable for that 1 ms only, so it was mostly
    // never made. After the last attempt (less than the margin left) the row waits for its
    // deadline, when the sweep dead-letters it.
    const last = delivery.deliverBy - LAST_ATTEMPT_MARGIN_MS;
    nextAttemptAt = last > now ? last : delivery.deliverBy;
  }
  return { kind: "retry", at: now, nextAttemptAt };
}
