// rateLimit (DESIGN §19): a token bucket per endpoint, capacity `burst`, refilled at `perSecond`,
// kept in the database (endpoint_buckets) so that every dispatcher on one database draws from the
// same bucket. A rate-limited endpoint's deliveries are leased only here (the other lease paths
// leave them: deliveries/endpoint-kind.ts), each lease taking one token in the transaction that
// takes it, so a delivery waiting for a token is not leased, not an attempt and not a failure;
// the head-of-line rule and deadlines are those of any claim. One operation per endpoint: its
// reads, the bucket's write, and the claim last (the remote write path answers an operation's
// returning write only as its last statement: db/remote-writer.ts).

import { all, exec, get, type Op } from "../db/op.ts";
import { defineWrite } from "../db/writer-ops.ts";
import { type ClaimedDelivery, claimLimitedHeads, countClaimableHeads } from "../deliveries/claim.ts";
import type { RateLimit } from "../endpoints/controls.ts";

export interface BucketClaimRequest {
  owner: string;
  now: number;
  leaseMs: number;
  endpointId: string;
  /** How many more sends the endpoint may start in this process now. */
  room: number;
}

export interface BucketClaim {
  rows: ClaimedDelivery[];
  /** Due work was left that the limit alone held back (the throttled metric). */
  throttled: boolean;
  /** When throttled: how soon the next token comes (ms). */
  nextInMs: number | null;
  /** Due work and tokens were left but no room: claim again as soon as sends end. */
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

const NONE: BucketClaim = { rows: [], throttled: false, nextInMs: null, roomBound: false };

function* claimThroughBucket(request: BucketClaimRequest): Op<BucketClaim> {
  const { endpointId, now, room } = request;
  const endpoint = yield* get<{ rateLimit: string | null }>(
    "SELECT rate_limit AS rateLimit FROM endpoints WHERE id = :id AND disabled = 0 AND kind = 'webhook'",
    { id: endpointId },
  );
  if (!endpoint?.rateLimit) return NONE;
  const limit = JSON.parse(endpoint.rateLimit) as RateLimit;
  const stored = yield* get<{ tokens: number; at: number }>(
    "SELECT tokens, at FROM endpoint_buckets WHERE endpoint_id = :id",
    { id: endpointId },
  );
  const tokens = refill(stored, limit, now);
  const allowed = Math.min(Math.floor(tokens), room);
  // One more than can be taken: whether work is left behind.
  const due = yield* countClaimableHeads(endpointId, now, allowed + 1);
  const taking = Math.min(allowed, due);
  const left = tokens - taking;
  // Never moved back: a dispatcher whose clock read came before another's write would
  // otherwise refill the same interval twice.
  yield* exec(
    `INSERT INTO endpoint_buckets (endpoint_id, tokens, at) VALUES (:id, :tokens, :at)
     ON CONFLICT (endpoint_id) DO UPDATE SET tokens = excluded.tokens, at = excluded.at`,
    { id: endpointId, tokens: left, at: Math.max(now, stored?.at ?? now) },
  );
  const rows = yield* claimLimitedHeads({ ...request, limit: taking });
  const behind = due > taking;
  const throttled = behind && allowed < room;
  return {
    rows,
    throttled,
    nextInMs: throttled ? Math.max(1, Math.ceil(((1 - left) * 1000) / limit.perSecond)) : null,
    roomBound: behind && !throttled && left >= 1,
  };
}

export const claimThroughBucketWrite = defineWrite("dispatch.claimThroughBucket", claimThroughBucket, {
  again: true,
});

/** The enabled rate-limited webhook endpoints (the dispatcher claims theirs through their buckets). */
export function* rateLimitedEndpoints(): Op<string[]> {
  const rows = yield* all<{ id: string }>(
    "SELECT id FROM endpoints WHERE rate_limit IS NOT NULL AND disabled = 0 AND kind = 'webhook'",
  );
  return rows.map((r) => r.id);
}
