// rateLimit (DESIGN §19): a token bucket per endpoint, capacity `burst`, refilled at `perSecond`,
// kept in the database (endpoint_buckets) so that every dispatcher on one database draws from the
// same bucket. A rate-limited endpoint's deliveries are leased only here (the other lease paths
// leave them: deliveries/endpoint-kind.ts), each lease taking one token in the transaction that
// takes it, so a delivery waiting for a token is not leased, not an attempt and not a failure;
// the head-of-line rule and deadlines are those of any claim.

import { all, get, type Op, run } from "../db/op.ts";
import { defineWrite } from "../db/writer-ops.ts";
import { type ClaimedDelivery, claimLimitedHeads } from "../deliveries/claim.ts";
import type { RateLimit } from "../endpoints/controls.ts";
import { loadSendContext, type SendContext } from "./send-context.ts";

export interface LimitedClaim {
  owner: string;
  now: number;
  leaseMs: number;
  /** How many more sends each endpoint may start now; endpoints not listed get `endpointLimit`. */
  endpointRoom: Record<string, number>;
  endpointLimit: number;
}

export interface LimitedClaimed {
  rows: ClaimedDelivery[];
  context: SendContext;
  /** Endpoints whose due work the limit alone held back (the throttled metric). */
  throttled: string[];
  /** The soonest a token comes for an endpoint that still has due work (ms from now), or null. */
  nextInMs: number | null;
  /** Some endpoint had tokens and due work left but no room: claim again as soon as sends end. */
  roomBound: boolean;
}

/** The bucket's tokens at `now`: what was stored, refilled since, at most `burst` (a new bucket is full). */
export function refill(
  stored: { tokens: number; at: number } | undefined,
  limit: RateLimit,
  now: number,
): number {
  if (!stored) return limit.burst;
  return Math.min(limit.burst, stored.tokens + (Math.max(0, now - stored.at) * limit.perSecond) / 1000);
}

function* claimThroughBuckets(request: LimitedClaim): Op<LimitedClaimed> {
  const limited = yield* all<{ id: string; rateLimit: string }>(
    "SELECT id, rate_limit AS rateLimit FROM endpoints WHERE rate_limit IS NOT NULL AND disabled = 0 AND kind = 'webhook'",
  );
  const rows: ClaimedDelivery[] = [];
  const throttled: string[] = [];
  let nextInMs: number | null = null;
  let roomBound = false;
  for (const endpoint of limited) {
    const limit = JSON.parse(endpoint.rateLimit) as RateLimit;
    const stored = yield* get<{ tokens: number; at: number }>(
      "SELECT tokens, at FROM endpoint_buckets WHERE endpoint_id = :id",
      { id: endpoint.id },
    );
    let tokens = refill(stored, limit, request.now);
    const room = request.endpointRoom[endpoint.id] ?? request.endpointLimit;
    const allowed = Math.min(Math.floor(tokens), room);
    const claimed = yield* claimLimitedHeads({ ...request, endpointId: endpoint.id, limit: allowed });
    tokens -= claimed.rows.length;
    rows.push(...claimed.rows);
    // Never moved back: a dispatcher whose clock read came before another's write would
    // otherwise refill the same interval twice.
    yield* run(
      `INSERT INTO endpoint_buckets (endpoint_id, tokens, at) VALUES (:id, :tokens, :at)
       ON CONFLICT (endpoint_id) DO UPDATE SET tokens = excluded.tokens, at = excluded.at`,
      { id: endpoint.id, tokens, at: Math.max(request.now, stored?.at ?? request.now) },
    );
    if (claimed.waiting > 0 && allowed >= room && tokens >= 1) roomBound = true;
    if (claimed.waiting > 0 && allowed < room) {
      throttled.push(endpoint.id);
      const wait = Math.ceil(((1 - tokens) * 1000) / limit.perSecond);
      nextInMs = nextInMs === null ? wait : Math.min(nextInMs, wait);
    }
  }
  const context =
    rows.length === 0
      ? { events: [], endpoints: [] }
      : yield* loadSendContext(
          [...new Set(rows.map((d) => d.eventId))],
          [...new Set(rows.map((d) => d.endpointId))],
        );
  return { rows, context, throttled, nextInMs, roomBound };
}

export const claimThroughBucketsWrite = defineWrite("dispatch.claimThroughBuckets", claimThroughBuckets, {
  again: true,
});

/** Whether any endpoint has a rateLimit (the dispatcher then runs its bucket claims). */
export function* anyRateLimited(): Op<boolean> {
  return (
    (yield* get("SELECT 1 AS one FROM endpoints WHERE rate_limit IS NOT NULL AND disabled = 0 LIMIT 1")) !==
    undefined
  );
}
