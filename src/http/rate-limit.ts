// Per-token rate limiting (DESIGN §3: 429 with Retry-After). A token bucket per token id:
// it holds up to `burst` requests and refills at `ratePerSecond`; a request takes one.
// Applied right after authentication (src/http/auth.ts), so every authenticated request
// counts, whatever its scope or outcome. In memory, per process: each outboxd process
// sharing a database limits on its own.
import { Problem } from "../lib/problem.ts";
import type { Clock } from "../lib/time.ts";
import { problemResponse } from "./errors.ts";

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets kept before idle (full) ones are dropped; only authenticated token ids get one. */
const MAX_BUCKETS = 10_000;

export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    readonly clock: Clock,
  ) {
    if (!(ratePerSecond > 0) || !(burst >= 1)) throw new RangeError("rate and burst must be positive");
  }

  /** Takes one request for `key`: 0 when it may go ahead, else the milliseconds until it may. */
  take(key: string): number {
    const now = this.clock();
    const bucket = this.#refill(this.#buckets.get(key), now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.#store(key, bucket);
      return 0;
    }
    this.#store(key, bucket);
    // (less a hair, so floating-point dust does not round 1 ms up to 2)
    return Math.max(1, Math.ceil(((1 - bucket.tokens) * 1000) / this.ratePerSecond - 1e-9));
  }

  #refill(bucket: Bucket | undefined, now: number): Bucket {
    if (!bucket) return { tokens: this.burst, at: now };
    // A clock that steps back refills nothing rather than draining the bucket.
    const elapsed = Math.max(0, now - bucket.at);
    return { tokens: Math.min(this.burst, bucket.tokens + (elapsed * this.ratePerSecond) / 1000), at: now };
  }

  #store(key: string, bucket: Bucket): void {
    if (!this.#buckets.has(key) && this.#buckets.size >= MAX_BUCKETS) this.#prune();
    this.#buckets.set(key, bucket);
  }

  /** Drops buckets that have refilled completely: forgetting them changes nothing. */
  #prune(): void {
    const now = this.clock();
    for (const [key, bucket] of this.#buckets) {
      if (this.#refill(bucket, now).tokens >= this.burst) this.#buckets.delete(key);
    }
  }
}

/** The limiter a configuration asks for, or null when OUTBOXD_RATE_LIMIT is 0. */
export function rateLimiterFor(
  config: { rateLimit: number; rateBurst: number },
  clock: Clock,
): RateLimiter | null {
  return config.rateLimit > 0 ? new RateLimiter(config.rateLimit, config.rateBurst, clock) : null;
}

/** The 429 for a wait of `waitMs`: problem+json and `Retry-After` in whole seconds, at least 1. */
export function rateLimitedResponse(waitMs: number): Response {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return problemResponse(
    new Problem(
      429,
      "rate-limited",
      "Too many requests",
      `This token is over its rate limit; retry in ${seconds} s.`,
      {
        retryAfter: seconds,
      },
    ),
    { "retry-after": String(seconds) },
  );
}
